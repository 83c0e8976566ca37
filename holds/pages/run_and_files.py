"""What the hold page fetches from the platform on the reviewer's behalf: the run panel, and the hold's files,
streamed through the app so the API key stays on the server."""

import contextlib
from urllib.parse import quote

from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from holds.mirror import platform, runs
from holds.pages import guards
from holds.related import same_run

INLINE_IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}


@guards.reviewer_required
@require_safe
def run_context(request, pk):
    hold = guards.hold_or_404(request, pk)
    with platform.PlatformClient.from_settings() as client:
        run, error = runs.run_context(hold, client)
    earlier, earlier_left_out = same_run.earlier_in_run(hold, request.viewer)
    context = {
        "hold": hold,
        "run": run,
        "error": error,
        "customer_message": runs.customer_message(run),
        "earlier": earlier,
        "earlier_left_out": earlier_left_out,
        "now": timezone.now(),
    }
    return render(request, "holds/_run.html", context)


@guards.reviewer_required
@require_safe
def hold_file(request, pk, file_id):
    """Stream a hold's file through the app, so the API key stays on the server."""
    hold = guards.hold_or_404(request, pk)
    attached = next((file for file in hold.files if file.get("id") == file_id), None)
    if attached is None:
        raise Http404("No such file on this hold.")
    stack = contextlib.ExitStack()
    client = stack.enter_context(platform.PlatformClient.from_settings())
    try:
        download = stack.enter_context(client.stream_file(hold.env, hold.hold_id, file_id))
    except platform.NotFound:
        stack.close()
        raise Http404("The platform no longer has this file.") from None
    except platform.PlatformError:
        stack.close()
        return HttpResponse(
            "The platform is unreachable; try the file again later.", status=503, content_type="text/plain"
        )
    inline = request.GET.get("inline") == "1" and download.content_type in INLINE_IMAGE_TYPES
    response = StreamingHttpResponse(
        _closing(download.chunks, stack), content_type=download.content_type if inline else "application/octet-stream"
    )
    if download.content_length is not None:
        response["Content-Length"] = str(download.content_length)
    response["Content-Disposition"] = _disposition(
        "inline" if inline else "attachment", attached.get("name") or file_id
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response


def _closing(chunks, stack):
    with stack:
        yield from chunks


def _disposition(kind: str, name: str) -> str:
    ascii_name = "".join(ch if ch.isascii() and ch.isprintable() and ch not in '"\\;' else "_" for ch in name) or "file"
    return f"{kind}; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}"
