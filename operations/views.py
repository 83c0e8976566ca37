"""The operators' endpoints: liveness, readiness and Prometheus metrics. None needs a session."""

from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from operations import access, health
from operations.metrics import ReviewQueueCollector


@login_not_required
@never_cache
@require_GET
def healthz(request):
    """Liveness: the process answers. It touches no database or broker, so a slow dependency never restarts it."""
    return JsonResponse({"status": "alive"})


@login_not_required
@never_cache
@require_GET
def readyz(request):
    """Readiness: the database and broker answer, every env synced lately, and beat runs; 503 otherwise.

    Anyone learns only ready or not; each check's detail (which names the envs) is for whoever may scrape /metrics.
    """
    ready, body = health.readiness()
    if not access.may_scrape(request):
        body = {"status": body["status"]}
    return JsonResponse(body, status=200 if ready else 503)


@login_not_required
@never_cache
@require_GET
def metrics(request):
    """Prometheus metrics for a scraper with the token or an allowed address; a 404 while neither is configured."""
    if not access.metrics_enabled():
        raise Http404
    if not access.may_scrape(request):
        response = HttpResponse(
            "A bearer token or an allowed address is required.\n", status=401, content_type="text/plain"
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ReviewQueueCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
