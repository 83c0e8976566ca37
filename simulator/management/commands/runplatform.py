"""`manage.py runplatform`: serve the simulated AgentOS platform until Ctrl+C."""

import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from simulator.server import PlatformServer
from simulator.state import DEFAULT_ENV, PlatformState


class Command(BaseCommand):
    help = "Serve a simulated AgentOS platform (the Holds API) for development and demos."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8765)
        parser.add_argument(
            "--api-key",
            default=getattr(settings, "AGENTOS_API_KEY", None) or "dev-key",
            help="the Bearer key clients must send (default: settings.AGENTOS_API_KEY, else dev-key)",
        )
        parser.add_argument(
            "--env",
            action="append",
            default=[],
            dest="envs",
            help="an extra environment to serve; repeatable (samples go to 'default')",
        )
        parser.add_argument(
            "--generate",
            type=int,
            default=0,
            metavar="N",
            help="add N generated holds to each environment",
        )
        parser.add_argument("--no-samples", action="store_true", help="start without samples")

    def handle(self, *args: Any, **options: Any) -> None:
        envs = list(dict.fromkeys([DEFAULT_ENV, *options["envs"]]))
        state = PlatformState()
        if not options["no_samples"]:
            state.load_samples()
        if options["generate"]:
            for env in envs:
                state.generate(env, options["generate"])
        server = PlatformServer(state, host=options["host"], port=options["port"], api_key=options["api_key"])
        with server:
            counts = ", ".join(f"{state.count_holds(env, 'open')} open holds in {env}" for env in envs)
            # Never print the key itself: this line ends up in terminals and CI logs.
            self.stdout.write(f"Simulated AgentOS platform at {server.url} ({counts}); Ctrl+C stops it.")
            try:
                wait_for_ctrl_c()
            except KeyboardInterrupt:
                self.stdout.write("Stopped.")


def wait_for_ctrl_c() -> None:
    """Block the main thread until Ctrl+C; the server answers from its own threads."""
    threading.Event().wait()
