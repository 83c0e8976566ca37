"""The production settings with the bench's URLconf, which adds a bare view: for the benchmarks' gunicorn only."""

from reviewqueue.settings import *  # noqa: F403

ROOT_URLCONF = "bench.http_urls"
