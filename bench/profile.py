"""Where a page's server time goes: the page and the bare view profiled side by side, through Django's WSGI handler.

    .venv/bin/python -m bench.profile [--path /] [--requests 400] [--top 30] [--sort tottime]

Runs on the database bench.http prepared and left (BENCH_DATABASE, default
``reviewqueue_bench_http``), with bench.http's settings (production's, ``DEBUG`` off, plus
the bare view). It signs bench.http's reviewer in, calls the WSGI application as gunicorn
does, without the network, ``--requests`` times for each of the two paths under cProfile
(after a warm-up, so imports, templates and the rows' cache are as a server under load
has them), and prints each one's time per request and its ``--top`` functions. The
difference between the two is what the page itself costs.
"""

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

from bench import http, serving, setup

BARE = "/bench/bare/"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", default="/", help="the page to profile against the bare view")
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--sort", default="tottime", choices=["tottime", "cumulative"])
    options = parser.parse_args()
    if "BENCH_DATABASE" not in os.environ:
        setup.DATABASE = "reviewqueue_bench_http"
    if not http.database_comment():
        raise SystemExit(f"{setup.DATABASE} is not prepared: run bench.http with BENCH_DATABASE={setup.DATABASE} first")
    environment = serving.production_environment(
        8201, f"{setup.SERVER}/{setup.DATABASE}", http.REDIS_URL, http.UNUSED_PLATFORM_URL, "bench-unused-key"
    )
    os.environ.update(environment)
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
    for path in (BARE, options.path):
        profile = cProfile.Profile()
        started = time.perf_counter()
        profile.enable()
        for _ in range(options.requests):
            request(path)
        profile.disable()
        elapsed = time.perf_counter() - started
        print(f"\n## {path}: {elapsed / options.requests * 1000:.2f} ms a request under the profiler")
        pstats.Stats(profile).sort_stats(options.sort).print_stats(options.top)


if __name__ == "__main__":
    main()
