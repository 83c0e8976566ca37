"""Where a page's server time goes: the page and the bare view profiled side by side, through Django's WSGI handler.

    .venv/bin/python -m bench.profile [--path /] [--requests 400] [--top 30] [--sort tottime] [--ours]
    .venv/bin/python -m bench.profile --parts [--rounds 5] [--requests 300]

Runs on the database bench.http prepared and left (BENCH_DATABASE, default
``reviewqueue_bench_http``), with bench.http's settings (production's, ``DEBUG`` off, plus
the bare view). It signs bench.http's reviewer in, calls the WSGI application as gunicorn
does, without the network, ``--requests`` times for each of the two paths under cProfile
(after a warm-up, so imports, templates and the rows' cache are as a server under load
has them), and prints each one's time per request and its ``--top`` functions. The
difference between the two is what the page itself costs. ``--ours`` lists only the
project's own functions (``--sort cumulative`` then reads as the page's parts).

``--parts`` measures without the profiler, which inflates the many small calls: the wall
time per request of the two paths (best of ``--rounds`` interleaved rounds), and within
the page the time spent in each of ``PARTS``, the queue's, timed by wrapping them.
"""

import argparse
import cProfile
import functools
import importlib
import io
import os
import pstats
import re
import sys
import time

from bench import http, serving, setup

BARE = "/bench/bare/"
# The queue's parts (module, function), each timed inclusive of what it calls: a part may contain another.
PARTS = [
    ("django.contrib.auth.middleware", "get_user"),
    ("django.contrib.sessions.backends.db", "SessionStore.load"),
    ("holds.pages.queue", "render"),
    ("holds.queue.listing", "page"),
    ("holds.queue.rows", "rows"),
    ("holds.queue.freshness", "sync_states_with"),
    ("teams.scopes", "viewer_of"),
    ("approvals.badges", "badges"),
    ("holds.queue.filter_values", "filter_values"),
    ("holds.queue.filter_form", "form"),
    ("reviewqueue.changes", "latest_id"),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", default="/", help="the page to profile against the bare view")
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--sort", default="tottime", choices=["tottime", "cumulative"])
    parser.add_argument("--ours", action="store_true", help="only the project's functions, not Django's or Python's")
    parser.add_argument("--parts", action="store_true", help="time PARTS without the profiler instead")
    parser.add_argument("--rounds", type=int, default=5, help="with --parts: interleaved rounds, the best kept")
    options = parser.parse_args()
    if "BENCH_DATABASE" not in os.environ:
        setup.DATABASE = "reviewqueue_bench_http"
    if not http.database_comment():
        raise SystemExit(f"{setup.DATABASE} is not prepared: run bench.http with BENCH_DATABASE={setup.DATABASE} first")
    environment = serving.production_environment(
        8201, f"{setup.SERVER}/{setup.DATABASE}", http.REDIS_URL, http.UNUSED_PLATFORM_URL, "bench-unused-key"
    )
    os.environ.update(environment)
    http.close_expired(environment["DATABASE_URL"])
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.wsgi import get_wsgi_application
    from django.test import Client
    from django.utils.crypto import get_random_string

    browser = Client()
    browser.force_login(User.objects.get(username=http.REVIEWER))
    # With a CSRF cookie, as a browser sends after its first page: without one each page would make a new secret.
    cookie = f"sessionid={browser.cookies['sessionid'].value}; csrftoken={get_random_string(32)}"
    application = get_wsgi_application()

    def request(path: str) -> None:
        location, _, query = path.partition("?")
        environ = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": location,
            "QUERY_STRING": query,
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8201",
            "HTTP_HOST": "127.0.0.1",
            "HTTP_COOKIE": cookie,
            "REMOTE_ADDR": "127.0.0.1",
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(),
            "wsgi.errors": sys.stderr,
        }
        statuses = []
        body = application(environ, lambda status, headers: statuses.append(status))
        b"".join(body)
        body.close()
        if not statuses[0].startswith("200"):
            raise SystemExit(f"{path} answered {statuses[0]}")

    for path in (BARE, options.path):
        for _ in range(20):
            request(path)
    if options.parts:
        time_parts(request, options)
        return
    for path in (BARE, options.path):
        profile = cProfile.Profile()
        started = time.perf_counter()
        profile.enable()
        for _ in range(options.requests):
            request(path)
        profile.disable()
        elapsed = time.perf_counter() - started
        print(f"\n## {path}: {elapsed / options.requests * 1000:.2f} ms a request under the profiler")
        ours = [rf"^{re.escape(str(serving.ROOT))}/(?!\.venv/)"] if options.ours else []
        pstats.Stats(profile).sort_stats(options.sort).print_stats(*ours, options.top)


def time_parts(request, options) -> None:
    """Each path's best wall time a request over interleaved rounds, and the page's time in each of ``PARTS``."""
    spent: dict[str, float] = {}

    def timed(function, label):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - started

        return wrapper

    for module_name, name in PARTS:
        owner = importlib.import_module(module_name)
        *classes, attribute = name.split(".")
        for class_name in classes:
            owner = getattr(owner, class_name)
        setattr(owner, attribute, timed(getattr(owner, attribute), f"{module_name}.{name}"))
    best: dict[str, tuple[float, dict]] = {}
    for _ in range(options.rounds):
        for path in (BARE, options.path):
            spent.clear()
            started = time.perf_counter()
            for _ in range(options.requests):
                request(path)
            elapsed = (time.perf_counter() - started) / options.requests
            if path not in best or elapsed < best[path][0]:
                best[path] = elapsed, dict(spent)
    for path, (elapsed, parts) in best.items():
        print(f"\n## {path}: {elapsed * 1000:.2f} ms a request (best of {options.rounds} rounds)")
        for label, seconds in sorted(parts.items(), key=lambda part: -part[1]):
            print(f"{seconds / options.requests * 1000:8.3f} ms  {label}")
    print(f"\nratio {best[BARE][0] / best[options.path][0]:.2f}")


if __name__ == "__main__":
    main()
