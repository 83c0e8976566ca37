"""Pages under load through gunicorn, as in production, at a full database: req/s, p50 and p99, against a bare view.

    .venv/bin/python -m bench.http [--open 10000] [--closed 100000] [--audit 1000000]
                                   [--rounds 6] [--duration 5] [--warm-up 1] [--port 8201] [--fresh]
                                   [--compare CHECKOUT --compare-database NAME]

Prepares its database (BENCH_DATABASE, default ``reviewqueue_bench_http``) once and
keeps it: the audit events in SQL (bench/audit.py), the open holds by a real sync from
the simulator, the closed holds as copies of the open ones shifted into the past (bulk
SQL: they are history, no sync would write them now). A later run with the same sizes
finds the database's comment naming them and only migrates it; ``--fresh`` rebuilds.

Then serves the app with gunicorn (2 workers, DEBUG off, production settings plus a
bare view "ok" behind the same middleware: bench/http_settings.py), signs a reviewer,
an auditor and an admin in through the login form, and drives each page with
Debian's wrk (``-t2 -c8 --latency``) in interleaved rounds: every page once per round,
so a slow moment of the machine touches all of them alike. It prints the medians over
the rounds of req/s, p50 and p99 (from wrk's latency distribution), each page's req/s
as a share of the bare view's, its queries per request (counted once in this
process through Django's test client), and the CPU time per request that gunicorn
and PostgreSQL's backends for the checkout's database spent (from /proc): a page's
cost on a busy machine, where req/s moves with whatever else runs. Installs wrk with apt when it is missing and
this runs as root. BENCH_REDIS_URL is gunicorn's broker (default Redis database 3).

``--compare`` serves another checkout too (e.g. a clone at an older commit, with this
bench/ copied in, whose database bench.http prepared there) on the port after next,
and loads each page on both back to back in every round, so that on a busy machine the
two see the same moments; it adds a table of their ratios.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import httpx
import psycopg
from psycopg import sql

from bench import serving, setup

REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/3")
WRK = Path("/usr/bin/wrk")
REVIEWER, AUDITOR, ADMIN = "bench-reviewer", "bench-auditor", "bench-admin"
AUDIT_REVIEWERS = 20
CLOSED_STATUSES = ["decided", "decided", "decided", "expired", "cancelled"]
UNUSED_PLATFORM_URL = "http://127.0.0.1:8219"  # no page under load may call the platform; a call would fail fast


@dataclass
class Page:
    label: str
    path: str
    user: str
    queries: int | None = None  # counted in this process: for this checkout only
    rounds: list[dict] = field(default_factory=list)

    def median(self, key: str) -> float:
        return statistics.median(result[key] for result in self.rounds)


@dataclass
class Checkout:
    """A checkout served by its own gunicorn on its own prepared database, and its pages."""

    root: Path
    database_url: str
    port: int
    pages: list[Page]
    url: str = ""
    cookies: dict[str, str] = field(default_factory=dict)  # each user's Cookie header, as their browser sends it

    def serving_processes(self):
        """Tests of a command line: this checkout's gunicorn (master and workers, which keep the command line
        they were started with: setproctitle is not installed), and the PostgreSQL backends connected to its
        database."""
        bind = f"--bind 127.0.0.1:{self.port} "
        database = f" {self.database_url.rsplit('/', 1)[1]} "
        return (
            lambda command: "gunicorn" in command and bind in command,
            lambda command: command.startswith("postgres:") and database in command,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--open", type=int, default=10_000)
    parser.add_argument("--closed", type=int, default=100_000)
    parser.add_argument("--audit", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--duration", type=int, default=5, help="seconds of each wrk run")
    parser.add_argument(
        "--warm-up", type=int, default=1, help="seconds of each page's wrk run before the rounds (0: none)"
    )
    parser.add_argument("--port", type=int, default=8201)
    parser.add_argument("--search", default="A-55010", help="an order id of an open hold, for the search page")
    parser.add_argument("--fresh", action="store_true", help="rebuild the database even when it holds these sizes")
    parser.add_argument("--compare", type=Path, metavar="CHECKOUT", help="another checkout to load in the same rounds")
    parser.add_argument("--compare-database", metavar="NAME", help="its database, prepared by bench.http run there")
    options = parser.parse_args()
    if bool(options.compare) != bool(options.compare_database):
        parser.error("--compare and --compare-database go together")
    if "BENCH_DATABASE" not in os.environ:
        setup.DATABASE = "reviewqueue_bench_http"
    wrk = ensure_wrk()
    warnings.filterwarnings("ignore", "No directory at")  # WhiteNoise in this process: no collectstatic for it

    started = time.perf_counter()
    prepared = f"bench.http: {options.open} open, {options.closed} closed holds, {options.audit} audit events"
    reuse = not options.fresh and database_comment() == prepared
    setup.django_on_database(fresh=not reuse)
    if reuse:
        print(
            f"reusing {setup.DATABASE} ({prepared}); migrated in {time.perf_counter() - started:.0f} s", file=sys.stderr
        )
    else:
        prepare(options)
        set_database_comment(prepared)
        print(f"prepared {setup.DATABASE} in {time.perf_counter() - started:.0f} s", file=sys.stderr)

    pages = pages_to_load(options.search)
    count_queries(pages)
    checkouts = [Checkout(serving.ROOT, os.environ["DATABASE_URL"], options.port, pages)]
    if options.compare:
        checkouts.insert(0, compared_checkout(options, prepared, pages))
    loaded = time.perf_counter()
    load_before = os.getloadavg()[0]
    with serving.stopped_at_exit(), tempfile.TemporaryDirectory() as logs, ExitStack() as servers:
        for checkout in checkouts:
            close_expired(checkout.database_url)
            serve(checkout, servers, Path(logs))
        for checkout in checkouts if options.warm_up else ():  # warm up: imports, templates and connections
            for page in checkout.pages:
                run_wrk(wrk, checkout, page, duration=options.warm_up)
        for number in range(1, options.rounds + 1):
            # Each page on every checkout back to back, which one goes first alternating by round.
            order = checkouts if number % 2 else checkouts[::-1]
            for position in range(len(pages)):
                for checkout in order:
                    checkout.pages[position].rounds.append(
                        run_wrk(wrk, checkout, checkout.pages[position], options.duration)
                    )
            print(f"round {number}/{options.rounds} done", file=sys.stderr, flush=True)
    for checkout in checkouts:
        print_table(checkout, options)
    if options.compare:
        print_comparison(*checkouts)
    print(f"\nmachine load average (1 min) {load_before:.1f} before the load phase, {os.getloadavg()[0]:.1f} after it")
    print(f"load phase {time.perf_counter() - loaded:.0f} s, whole run {time.perf_counter() - started:.0f} s")


def compared_checkout(options, prepared: str, pages: list[Page]) -> Checkout:
    """The other checkout, on its database as bench.http prepared it there, with the same pages."""
    root = options.compare.resolve()
    if not (root / "manage.py").exists() or not (root / "bench" / "http_urls.py").exists():
        raise SystemExit(f"{root} is no checkout with bench/http_urls.py: copy bench/ there first")
    if database_comment(options.compare_database) != prepared:
        raise SystemExit(
            f"{options.compare_database} is not prepared with these sizes: run bench.http in {root} "
            f"with BENCH_DATABASE={options.compare_database} first"
        )
    database_url = f"{setup.SERVER}/{options.compare_database}"
    with psycopg.connect(database_url) as connection:
        (hold_pk,) = connection.execute(
            "SELECT id FROM holds_hold WHERE status = 'open' ORDER BY id "
            "OFFSET (SELECT count(*) / 2 FROM holds_hold WHERE status = 'open') LIMIT 1"
        ).fetchone()
    same = [Page(page.label, page.path, page.user) for page in pages]
    same[-1].path = f"/holds/{hold_pk}/"
    return Checkout(root, database_url, options.port + 2, same)


def serve(checkout: Checkout, servers: ExitStack, logs: Path) -> None:
    """Start the checkout's gunicorn, sign its users in and check that every page answers them."""
    environment = serving.production_environment(
        checkout.port, checkout.database_url, REDIS_URL, UNUSED_PLATFORM_URL, "bench-unused-key"
    )
    serving.collectstatic_if_needed(environment, checkout.root)
    checkout.url = servers.enter_context(
        serving.gunicorn(environment, checkout.port, logs / f"gunicorn-{checkout.port}.log", root=checkout.root)
    )
    for user in {page.user for page in checkout.pages}:
        # The session's and the CSRF cookie, as a browser sends them: without the latter each page would make a new
        # CSRF secret, which a browser's pages after its first do not.
        signed_in = serving.sign_in(checkout.url, user)
        checkout.cookies[user] = "; ".join(f"{name}={value}" for name, value in signed_in.cookies.items())
    for page in checkout.pages:
        check_page(checkout, page)


def close_expired(database_url: str) -> None:
    """Close the open holds past their expiry, as the expiry sweep does every few seconds in production.

    No sweep runs here: in a database kept for later runs, the expired holds would pile up at the head of the
    queue's order, and each page would skip more of them the older the database is.
    """
    with psycopg.connect(database_url, autocommit=True) as connection:
        closed = connection.execute(
            "UPDATE holds_hold SET status = 'expired', closed_at = now(), expired_here_at = now(), "
            "claimed_by_id = NULL, claimed_at = NULL, claim_expires_at = NULL "
            "WHERE status = 'open' AND expires_at <= now()"
        ).rowcount
        connection.execute("VACUUM (ANALYZE) holds_hold")
    print(f"closed {closed:,} expired holds in {database_url.rsplit('/', 1)[1]}", file=sys.stderr)


def ensure_wrk() -> Path:
    """Debian's wrk, installed with apt when missing and allowed."""
    if WRK.exists():
        return WRK
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise SystemExit("bench.http needs wrk at /usr/bin/wrk: install Debian's (apt-get install wrk)")
    print("bench.http: wrk is not installed; installing Debian's wrk with apt", file=sys.stderr, flush=True)
    apt = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], env=apt, check=True, stdout=sys.stderr)
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], env=apt, check=True, stdout=sys.stderr)
    return WRK


def database_comment(name: str | None = None) -> str | None:
    """The comment on the database ``name`` (default: the bench's), which names the sizes it was prepared with."""
    with psycopg.connect(f"{setup.SERVER}/postgres") as connection:
        row = connection.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", [name or setup.DATABASE]
        ).fetchone()
    return row[0] if row else None


def set_database_comment(text: str) -> None:
    with psycopg.connect(f"{setup.SERVER}/postgres", autocommit=True) as connection:
        connection.execute(
            sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(setup.DATABASE), sql.Literal(text))
        )


def prepare(options) -> None:
    """Users, audit events, open holds by a real sync, closed holds copied from them; then statistics."""
    from django.db import connection

    from bench import audit
    from holds.mirror import platform, sync
    from reviewqueue import roles
    from tests.helpers.users import make_user

    serving.create_user(REVIEWER, roles.REVIEWERS)
    serving.create_user(AUDITOR, roles.AUDITORS)
    serving.create_user(ADMIN, superuser=True)
    people = [make_user(f"reviewer{n:02d}", roles.REVIEWERS) for n in range(AUDIT_REVIEWERS)]
    audit.generate(options.audit, people)  # first: it numbers its events from 1, sync's follow them

    started = time.perf_counter()
    with (
        setup.simulated_platform(options.open, port=options.port + 1),
        platform.PlatformClient.from_settings() as client,
    ):
        result = sync.sync_env(client, "default")
    print(
        f"synced {options.open:,} open holds in {time.perf_counter() - started:.1f} s: {vars(result)}", file=sys.stderr
    )

    started = time.perf_counter()
    copy_closed_holds(options.closed)
    with connection.cursor() as cursor:
        # VACUUM too, not ANALYZE alone: the freshly written tables are then as a running database's are (visibility
        # maps set), with nothing left for autovacuum to do during the first load phase.
        cursor.execute("VACUUM (ANALYZE)")
    print(
        f"copied {options.closed:,} closed holds and vacuumed in {time.perf_counter() - started:.1f} s", file=sys.stderr
    )


def copy_closed_holds(count: int) -> None:
    """``count`` closed holds: the open ones again (ids suffixed ``-c{n}``), n days older, decided, expired or
    cancelled.

    The columns come from the model, so the copy follows whatever the checkout's schema is.
    """
    from django.db import connection

    from holds.models import Hold, HoldItem
    from tests.helpers.many_holds import copying_holds

    open_count = Hold.objects.filter(status="open").count()
    changed = {
        "hold_id": "h.hold_id || %(suffix)s",
        "run_id": "h.run_id || %(suffix)s",
        "status": "s.status",
        "created_at": "h.created_at - %(age)s",
        "expires_at": "h.expires_at - %(age)s",
        "first_seen_at": "h.first_seen_at - %(age)s",
        "last_synced_at": "h.created_at - %(age)s + interval '1 hour'",
        "closed_at": "h.created_at - %(age)s + interval '1 hour'",
        "decided_at": "CASE WHEN s.status = 'decided' THEN h.created_at - %(age)s + interval '1 hour' END",
        "decided_by": "CASE WHEN s.status = 'decided' THEN 'reviewer01@example.com' ELSE '' END",
        "payload": "h.payload || jsonb_build_object('hold_id', h.hold_id || %(suffix)s, 'status', s.status)",
        "claimed_by_id": "NULL",
        "claimed_at": "NULL",
        "claim_expires_at": "NULL",
    }
    item_columns = [f.column for f in HoldItem._meta.concrete_fields if f.column not in ("id", "hold_id")]
    copy_holds = copying_holds(
        changed,
        "holds_hold h, "
        "LATERAL (SELECT (%(statuses)s::text[])[1 + (h.id + %(copy)s) %% cardinality(%(statuses)s::text[])] "
        "AS status) s "
        "WHERE h.status = 'open' ORDER BY h.id LIMIT %(limit)s",
    )
    copy_items = sql.SQL(
        "INSERT INTO holds_holditem (hold_id, {columns}) SELECT n.id, {values} FROM holds_hold h "
        "JOIN holds_hold n ON n.env = h.env AND n.hold_id = h.hold_id || %(suffix)s "
        "JOIN holds_holditem i ON i.hold_id = h.id WHERE h.status = 'open'"
    ).format(
        columns=sql.SQL(", ").join(map(sql.Identifier, item_columns)),
        values=sql.SQL(", ").join(sql.SQL("i.{}").format(sql.Identifier(c)) for c in item_columns),
    )
    copies = -(-count // open_count)
    with connection.cursor() as cursor:
        for number in range(1, copies + 1):
            parameters = {
                "suffix": f"-c{number}",
                "age": timedelta(days=number),
                "copy": number,
                "statuses": CLOSED_STATUSES,
                "limit": min(open_count, count - (number - 1) * open_count),
            }
            cursor.execute(copy_holds.as_string(connection.connection), parameters)
            cursor.execute(copy_items.as_string(connection.connection), parameters)


def pages_to_load(search: str) -> list[Page]:
    from holds.models import Hold

    if not Hold.objects.filter(status="open", search_text__contains=search.lower()).exists():
        raise SystemExit(f"no open hold matches --search {search!r}; give an order id that exists")
    open_holds = Hold.objects.filter(status="open").order_by("pk").values_list("pk", flat=True)
    hold_pk = open_holds[len(open_holds) // 2]
    return [
        Page('bare view (signed in, "ok")', "/bench/bare/", REVIEWER),
        Page("/ queue, 50 rows", "/", REVIEWER),
        Page(f"/?q={search}", f"/?q={search}", REVIEWER),
        Page("admin Hold changelist", "/admin/holds/hold/", ADMIN),
        Page("/audit/", "/audit/", AUDITOR),
        Page("/holds/<pk>/", f"/holds/{hold_pk}/", REVIEWER),
    ]


def count_queries(pages: list[Page]) -> None:
    """Each page's queries per request, counted in this process on a session already in use."""
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client, override_settings
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    setup_test_environment()  # the test client's host, "testserver", allowed
    with override_settings(ROOT_URLCONF="bench.http_urls"):
        browsers = {}
        for page in pages:
            if page.user not in browsers:
                browsers[page.user] = Client()
                browsers[page.user].force_login(User.objects.get(username=page.user))
            browser = browsers[page.user]
            browser.get(page.path)  # the session's first use writes it; later requests do not
            with CaptureQueriesContext(connection) as captured:
                response = browser.get(page.path)
            if response.status_code != 200:
                raise SystemExit(f"{page.path} answered {response.status_code} in process")
            page.queries = len(captured.captured_queries)


def check_page(checkout: Checkout, page: Page) -> None:
    """The page answers 200 to the signed-in user: a redirect to the login form would count as a success in wrk."""
    response = httpx.get(f"{checkout.url}{page.path}", headers={"Cookie": checkout.cookies[page.user]}, timeout=60)
    if response.status_code != 200:
        raise SystemExit(
            f"{page.path} answered {response.status_code} to {page.user} through {checkout.root}'s gunicorn"
        )


LATENCY_LINE = re.compile(r"^\s*(50|99)%\s+([\d.]+)(us|ms|s|m)\s*$", re.MULTILINE)
UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def run_wrk(wrk: Path, checkout: Checkout, page: Page, duration: int) -> dict:
    """One wrk run at the page: req/s, p50 and p99 in ms, how many answers were not 2xx/3xx or failed, and the CPU
    time per request of the checkout's gunicorn and of the PostgreSQL backends serving its database."""
    cookie = f"Cookie: {checkout.cookies[page.user]}"
    app, database = checkout.serving_processes()
    cpu_before = cpu_seconds(app), cpu_seconds(database)
    finished = subprocess.run(
        # A long timeout: a slow answer must count in the latencies, not vanish as a socket error.
        [
            str(wrk),
            "-t2",
            "-c8",
            f"-d{duration}s",
            "--timeout",
            "30s",
            "--latency",
            "-H",
            cookie,
            f"{checkout.url}{page.path}",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    cpu_after = cpu_seconds(app), cpu_seconds(database)
    output = finished.stdout
    requests = int(re.search(r"(\d+) requests in", output).group(1)) or 1
    latencies = {percent: float(value) * UNIT_MS[unit] for percent, value, unit in LATENCY_LINE.findall(output)}
    failed = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
        "p50": latencies["50"],
        "p99": latencies["99"],
        "failed": int(failed.group(1)) if failed else 0,
        "socket_errors": sum(map(int, socket_errors.groups())) if socket_errors else 0,
        "app_cpu": cpu_spent(cpu_before[0], cpu_after[0]) / requests * 1000,
        "db_cpu": cpu_spent(cpu_before[1], cpu_after[1]) / requests * 1000,
    }


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(matches) -> dict[int, float]:
    """The CPU time, user and system, that each running process whose command line ``matches`` has used, by pid."""
    used = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        if matches(command):
            used[int(stat.parent.name)] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime
    return used


def cpu_spent(before: dict[int, float], after: dict[int, float]) -> float:
    """The CPU time the processes spent between two readings of ``cpu_seconds``.

    A process that ended in between takes its share with it: the database's connections live
    for a minute (CONN_MAX_AGE), so now and then a run's figure misses a little.
    """
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def print_table(checkout: Checkout, options) -> None:
    pages = checkout.pages
    bare = pages[0].median("rps")
    print(
        f"\nbench.http at {checkout_version(checkout.root)}: gunicorn --workers 2, DEBUG=0; "
        f"{options.open:,} open + {options.closed:,} closed holds, {options.audit:,} audit events (plus sync's); "
        f"wrk -t2 -c8 -d{options.duration}s; medians of {options.rounds} interleaved rounds\n"
    )
    print("| page | req/s | p50 ms | p99 ms | queries | ratio to bare | CPU ms/request: gunicorn | PostgreSQL |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for page in pages:
        rps = page.median("rps")
        print(
            f"| {page.label} | {rps:.0f} | {page.median('p50'):.1f} | {page.median('p99'):.1f} "
            f"| {'—' if page.queries is None else page.queries} | {ratio(rps, bare)} "
            f"| {page.median('app_cpu'):.2f} | {page.median('db_cpu'):.2f} |"
        )
    for page in pages:
        failed = sum(result["failed"] for result in page.rounds)
        errors = sum(result["socket_errors"] for result in page.rounds)
        if failed or errors:
            print(f"warning: {page.label}: {failed} answers not 2xx/3xx, {errors} socket errors")
    spread = ", ".join(
        f"{page.path} {min(r['rps'] for r in page.rounds):.0f}-{max(r['rps'] for r in page.rounds):.0f}"
        for page in pages
    )
    print(f"\nreq/s range over the rounds: {spread}")


def print_comparison(compared: Checkout, this: Checkout) -> None:
    print(f"\n{this.root} against {compared.root}, measured in the same rounds (medians; ratio > 1: faster here)\n")
    print("| page | req/s there | req/s here | req/s ratio | p50 ms there | p50 ms here | p99 ms there | p99 ms here |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for there, here in zip(compared.pages, this.pages, strict=True):
        print(
            f"| {here.label} | {there.median('rps'):.0f} | {here.median('rps'):.0f} | "
            f"{ratio(here.median('rps'), there.median('rps'))} | "
            f"{there.median('p50'):.1f} | {here.median('p50'):.1f} | "
            f"{there.median('p99'):.1f} | {here.median('p99'):.1f} |"
        )


def ratio(value: float, base: float) -> str:
    """``value / base``, or a dash when no request at all finished in the base's runs."""
    return f"{value / base:.2f}" if base else "—"


def checkout_version(root: Path) -> str:
    """The checkout's commit, and whether its work tree outside bench/ differs from it."""

    def git(*arguments: str) -> str:
        return subprocess.run(["git", *arguments], cwd=root, capture_output=True, text=True).stdout.strip()

    changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench")
    return f"{root} {git('rev-parse', '--short', 'HEAD')}{' + uncommitted changes' if changed else ''}"


if __name__ == "__main__":
    main()
