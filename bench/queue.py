"""The queue page's server time and query count with 10,000 open holds.

    .venv/bin/python -m bench.queue [--holds 10000] [--requests 60] [--plans] [--verbose] [--related PERCENT]
    .venv/bin/python -m bench.queue --growth [--requests 60] [--rounds 8] [--related 10]  # 1,000 to 100,000
    .venv/bin/python -m bench.queue --versus /path/to/other/checkout [--versus-database NAME] [--rounds 8]
    .venv/bin/python -m bench.queue --policies [--holds 10000] [--rounds 8] [--requests 20]

Times the whole request through Django's handler in this process (no network), for
the first page, the htmx refresh, a filtered page, a search, a page deep into the
queue, and the same in the other orders (by amount, by age) and with an amount range.
Each page is asked for once with an empty cache ("cold": every row rendered), then
``--requests`` times as reviewers' browsers do ("p50", "p95": the rows come from the
cache, here or kept by the process). The query count is every query of one request:
session, user, roles, bell (not on the htmx refresh, which shows none), sync states,
holds, and whatever else it takes.

Then it prints the plan and SQL time of a search by order id, and with ``--plans`` the
plan of every query the first page and the refresh make: none may read more rows as
the open holds grow. ``--growth`` runs the bench at each size in a process of its own
(a fresh database each, named after the size) and prints the medians side by side with
their ratio to 1,000; then it times the sizes again in interleaved rounds.
``--versus`` times this checkout against another (say, the last commit's, copied out
with ``git archive``) in interleaved rounds on the database the last run left; beside
the wall time it prints each server's CPU time per request, which a busy machine
disturbs far less (the database's own work is not in it).
``--policies`` times the queue with 20 approval policies and 5 scoped groups (the
reviewer in two of them) against the same queue with neither, in interleaved rounds.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime

from bench import setup

GROWTH_SIZES = (1_000, 10_000, 100_000)
RESULT = "RESULT\t"  # the lines --growth reads from each size's run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holds", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--verbose", action="store_true", help="print each query's time")
    parser.add_argument(
        "--plans", action="store_true", help="print the plan of every query of the first page and the refresh"
    )
    parser.add_argument("--growth", action="store_true", help="run at 1,000, 10,000 and 100,000 open holds and compare")
    parser.add_argument("--versus", metavar="CHECKOUT", help="time this checkout's queue against another's, in turns")
    parser.add_argument(
        "--versus-database",
        metavar="NAME",
        help="the other checkout's own bench database (its migrations differ): run bench.queue there with "
        "BENCH_DATABASE=NAME first; by default both serve the database the last run here left",
    )
    parser.add_argument("--rounds", type=int, default=8, help="turns of --versus, --policies or --growth")
    parser.add_argument("--policies", action="store_true", help="with 20 policies and 5 scoped groups against without")
    parser.add_argument(
        "--related",
        type=int,
        default=0,
        metavar="PERCENT",
        help="this share of the open holds in pairs asking about the same order, as an agent asking twice does",
    )
    options = parser.parse_args()
    if options.growth:
        growth(options.requests, options.rounds, options.related)
    elif options.versus:
        versus(options.versus, options.versus_database or setup.DATABASE, options.rounds, options.requests)
    elif options.policies:
        with_and_without_policies(options)
    else:
        run(options)


def synced_and_signed_in(holds: int, related_percent: int = 0):
    """A fresh database with ``holds`` open holds synced from the simulator (``related_percent`` of them in pairs
    asking about the same order), and a test client signed in as the reviewer "bench" (whom the --versus and --growth
    servers sign in as too): the client and the reviewer."""
    setup.django_on_fresh_database()

    from django.db import connection
    from django.test import Client

    from holds.mirror import platform, sync
    from reviewqueue import roles
    from tests.helpers.users import make_user

    started = time.perf_counter()
    related_every = round(200 / related_percent) if related_percent else 0  # two holds in every related_every
    with setup.simulated_platform(holds, related_every=related_every), platform.PlatformClient.from_settings() as api:
        sync.sync_env(api, "default")
    print(f"sync of {holds} open holds: {time.perf_counter() - started:.1f} s")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # as autovacuum soon would: statistics for the planner, and no vacuum mid-run
    reviewer = make_user("bench", roles.REVIEWERS)
    browser = Client(HTTP_HOST="localhost")  # a host ALLOWED_HOSTS names
    browser.force_login(reviewer)
    return browser, reviewer


def run(options) -> None:
    browser, _ = synced_and_signed_in(options.holds, options.related)

    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from reviewqueue import softcache

    deep_cursor = page_21(browser, "/?")
    deep_amount_cursor = page_21(browser, "/?sort=amount&")
    pages = [(label, url) for label, url, _ in _pages_without_cursor()] + [
        ("page 21 (keyset)", f"/?after={deep_cursor}"),
        ("sorted by amount, page 21", f"/?sort=amount&after={deep_amount_cursor}"),
    ]
    print(f"{'page':32} {'cold':>9} {'p50':>9} {'p95':>9}  queries  rows")
    for label, url in pages:
        headers = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "queue-body"} if "htmx" in label else {}
        cache.key_prefix = (
            f"bench-cold-{time.time_ns()}"  # an empty cache for this page, without flushing anyone's Redis
        )
        softcache.forget()  # and none of the values this process kept
        cold_started = time.perf_counter()
        browser.get(url, **headers)
        cold = time.perf_counter() - cold_started
        times = []
        for _ in range(options.requests):
            started = time.perf_counter()
            response = browser.get(url, **headers)
            times.append(time.perf_counter() - started)
            assert response.status_code == 200
        with CaptureQueriesContext(connection) as queries:
            browser.get(url, **headers)
        if options.verbose:
            for query in queries.captured_queries:
                print(f"    {float(query['time']) * 1000:6.1f} ms  {query['sql'][:150]}")
        median, p95 = statistics.median(times) * 1000, setup.percentile(times, 0.95) * 1000
        # Rows counted in the markup: the test environment's template instrumentation would slow every request.
        count, rows = len(queries.captured_queries), response.content.count(b'class="hold-row')
        print(f"{label:32} {cold * 1000:6.1f} ms {median:6.1f} ms {p95:6.1f} ms  {count:7}  {rows:4}")
        print(f"{RESULT}{label}\t{median:.2f}\t{count}", file=sys.stderr)
        if options.plans and label in ("first page", "htmx refresh"):
            print_query_plans(label, queries.captured_queries)
    print_search_plan()


def print_query_plans(label: str, queries: list[dict]) -> None:
    """EXPLAIN ANALYZE of every query a page made, with the rows each step read."""
    from django.db import connection

    print(f"\nplans of the {label}'s {len(queries)} queries:")
    for query in queries:
        print(f"  {query['sql'][:160]}")
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {query['sql']}")
            for (line,) in cursor.fetchall():
                print(f"      {line}")
    print()


def print_search_plan() -> None:
    """EXPLAIN ANALYZE of a search by order id as the queue runs it, and its SQL time (best of 20)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from holds.queue import listing as queue

    filters = queue.Filters(q="a-55010")
    with CaptureQueriesContext(connection) as queries:
        queue.page(filters, None, timezone.now(), "")
    sql = queries.captured_queries[0]["sql"]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {sql}")
        plan = [line for (line,) in cursor.fetchall()]
        times = []
        for _ in range(20):
            started = time.perf_counter()
            cursor.execute(sql)
            cursor.fetchall()
            times.append(time.perf_counter() - started)
    uses_index = any("hold_open_search_trgm" in line for line in plan)
    print(
        f"\nsearch by order id: SQL {min(times) * 1000:.2f} ms best, {statistics.median(times) * 1000:.2f} ms median;"
        f" trigram index {'used' if uses_index else 'NOT used'}"
    )
    for line in plan:
        print(f"    {line}")
    print(f"{RESULT}search SQL\t{statistics.median(times) * 1000:.2f}\t1", file=sys.stderr)


def growth(requests: int, rounds: int, related_percent: int) -> None:
    """The bench at each of GROWTH_SIZES, each in its own process and database; then the sizes in interleaved rounds.

    The first table is each run's own medians, one size after the other; the second times
    the pages (those without a cursor, which each database has its own of) on the three
    databases in turns, so that the ratio of 100,000 to 1,000 is not a busy moment's.
    """
    results: dict[int, dict[str, tuple[float, int]]] = {}
    for holds in GROWTH_SIZES:
        print(f"== {holds} open holds", flush=True)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "bench.queue", "--holds", str(holds), "--requests", str(requests)]
            + ["--related", str(related_percent)],
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            env=os.environ | {"BENCH_DATABASE": _growth_database(holds)},
        )
        sys.stderr.write("".join(line + "\n" for line in done.stderr.splitlines() if not line.startswith(RESULT)))
        if done.returncode:
            raise SystemExit(f"the bench at {holds} open holds failed")
        print(f"(whole run {time.perf_counter() - started:.0f} s)\n", flush=True)
        results[holds] = {
            label: (float(median), int(count))
            for label, median, count in (
                line[len(RESULT) :].split("\t") for line in done.stderr.splitlines() if line.startswith(RESULT)
            )
        }
    smallest, largest = GROWTH_SIZES[0], GROWTH_SIZES[-1]
    header = "".join(f"{size:>16,}" for size in GROWTH_SIZES)
    print(f"each size in its own run:\n{'p50 ms (queries)':32}{header}  {largest:,}/{smallest:,}")
    for label in results[smallest]:
        cells = "".join(f"{results[size][label][0]:10.2f} ({results[size][label][1]})" for size in GROWTH_SIZES)
        print(f"{label:32}{cells}  {results[largest][label][0] / results[smallest][label][0]:9.2f}x")

    servers = {size: _server(os.getcwd(), _growth_database(size)) for size in GROWTH_SIZES}
    pages = _pages_without_cursor()
    medians, _ = _interleaved(servers, pages, rounds, requests)
    header = "".join(f"{size:>10,}" for size in GROWTH_SIZES)
    print(
        f"\nthe sizes in turns ({rounds} rounds of {requests} requests):\n"
        f"{'p50 ms':32}{header}  {largest:,}/{smallest:,}"
    )
    for label, _, _ in pages:
        cells = [statistics.median(medians[label, size]) for size in GROWTH_SIZES]
        print(f"{label:32}{''.join(f'{cell:10.2f}' for cell in cells)}  {cells[-1] / cells[0]:9.2f}x")


def _growth_database(holds: int) -> str:
    return f"{setup.DATABASE}_{holds}"


def _pages_without_cursor() -> list[tuple[str, str, str]]:
    """(label, url, "1" for an htmx refresh) of the bench's pages that any of its databases serves alike."""
    # The refresh of a queue opened now: the count of new holds runs, and finds the few that arrive.
    opened = datetime.now(UTC).isoformat().replace("+", "%2B")
    return [
        ("first page", "/", "0"),
        ("htmx refresh", f"/?loaded_at={opened}", "1"),
        ("filtered: agent + expiring 4h", "/?agent=support-agno&expiring=4h", "0"),
        ("search: order id", "/?q=A-55010", "0"),
        ("sorted by amount", "/?sort=amount", "0"),
        ("sorted by age", "/?sort=age", "0"),
        ("amount 100 to 150, by amount", "/?sort=amount&min_amount=100&max_amount=150", "0"),
    ]


# A process serving one checkout's queue from one database: it reads "url htmx requests" lines and answers
# each with the median time of that many requests and the CPU time per request, in ms.
SERVER = """
import os, statistics, sys, time
import django
django.setup()
from django.contrib.auth.models import User
from django.test import Client
browser = Client(HTTP_HOST="localhost")  # a host ALLOWED_HOSTS names
browser.force_login(User.objects.get(username="bench"))
print("ready", flush=True)
for line in sys.stdin:
    url, htmx, count = line.split()
    headers = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "queue-body"} if htmx == "1" else {}
    browser.get(url, **headers)  # untimed: the first of a page in a process compiles its templates
    times = []
    cpu = time.process_time()
    for _ in range(int(count)):
        started = time.perf_counter()
        assert browser.get(url, **headers).status_code == 200
        times.append(time.perf_counter() - started)
    print(statistics.median(times) * 1000, (time.process_time() - cpu) / int(count) * 1000, flush=True)
"""


def _server(checkout: str, database: str) -> subprocess.Popen:
    """A SERVER process of ``checkout``'s code on ``database`` of the bench's server, signed in and ready."""
    environment = os.environ | {
        "PYTHONPATH": checkout,
        "DATABASE_URL": f"{setup.SERVER}/{database}",
        "DJANGO_SETTINGS_MODULE": "tests.settings",
    }
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER],
        cwd=checkout,
        env=environment,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert server.stdout.readline().strip() == "ready", f"the queue of {checkout} on {database} did not start"
    return server


def _interleaved(servers: dict, pages: list[tuple[str, str, str]], rounds: int, requests: int) -> tuple[dict, dict]:
    """Each page on each server in turns, the servers' order turned each round, so that whatever else loads the
    machine weighs on all alike; then the servers are stopped. Returns the medians and CPU per request by (label,
    server)."""
    medians: dict[tuple[str, object], list[float]] = {}
    cpu: dict[tuple[str, object], list[float]] = {}
    names = list(servers)
    for turn in range(rounds):
        order = names[turn % len(names) :] + names[: turn % len(names)]
        for label, url, htmx in pages:
            for name in order if turn % 2 == 0 else reversed(order):
                servers[name].stdin.write(f"{url} {htmx} {requests}\n")
                servers[name].stdin.flush()
                median, cpu_per_request = servers[name].stdout.readline().split()
                medians.setdefault((label, name), []).append(float(median))
                cpu.setdefault((label, name), []).append(float(cpu_per_request))
    for server in servers.values():
        server.stdin.close()
        server.wait()
    return medians, cpu


def versus(other: str, other_database: str, rounds: int, requests: int) -> None:
    """This checkout's queue, on the database the last run left, against ``other``'s (e.g. a copy of the last commit)
    on ``other_database``: the same one, or, where the two checkouts' migrations differ, one that a run of
    ``other``'s own bench.queue filled with the same holds.

    Both serve the same pages in turns, the order swapped each round, so that whatever
    else loads the machine weighs on both alike; prints each side's median and the ratio.
    """
    servers = {"this": _server(os.getcwd(), setup.DATABASE), "other": _server(os.path.abspath(other), other_database)}
    pages = [page for page in _pages_without_cursor() if page[0] in ("first page", "htmx refresh", "sorted by amount")]
    medians, cpu = _interleaved(servers, pages, rounds, requests)
    print(
        f"{'page':20} {'this p50':>10} {'other p50':>10}  this/other  {'this CPU':>10} {'other CPU':>10}  this/other"
        f"   ({rounds} rounds of {requests} requests)"
    )
    for label, _, _ in pages:
        mine, theirs = statistics.median(medians[label, "this"]), statistics.median(medians[label, "other"])
        my_cpu, their_cpu = statistics.median(cpu[label, "this"]), statistics.median(cpu[label, "other"])
        print(
            f"{label:20} {mine:7.1f} ms {theirs:7.1f} ms  {mine / theirs:9.2f}  {my_cpu:7.1f} ms {their_cpu:7.1f} ms"
            f"  {my_cpu / their_cpu:9.2f}"
        )


def with_and_without_policies(options) -> None:
    """The queue with 20 approval policies and 5 scoped groups against none, in interleaved rounds.

    The policies match the generated holds by agent, capability and amount, as a finance team
    would write them; the reviewer belongs to two of the scoped groups, whose scopes cover
    three of the four generated agents, so that every page is full and every row is judged.
    """
    browser, reviewer = synced_and_signed_in(options.holds)

    from decimal import Decimal

    from django.contrib.auth.models import Group
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from approvals.models import ApprovalPolicy
    from teams.models import TeamScope

    finance_leads = Group.objects.create(name="Finance leads")
    agents = [
        "llamaindex-support",
        "upsonic-support",
        "support-agno",
        "support-openai-agents",
        "*-support",
        "support-*",
    ]

    def add_policies_and_scopes() -> None:
        for number in range(20):
            agent = agents[number % len(agents)]
            ApprovalPolicy.objects.create(
                name=f"policy {number}",
                env_pattern="default" if number % 3 else "",
                agent_pattern=agent,
                capability_pattern="refund*" if number % 2 else "",
                condition_key="amount" if number % 4 else "",
                condition_operator=ApprovalPolicy.Operator.GREATER if number % 4 else "",
                condition_threshold=Decimal(50 * number) if number % 4 else None,
                approvals_required=1 + number % 3,
                later_approver_group=finance_leads if number % 2 else None,
            )
        for number, patterns in enumerate(
            ["llamaindex-*", "upsonic-*\nsupport-agno", "nobody-*", "billing-*", "ops-*"]
        ):
            group = Group.objects.create(name=f"team {number}")
            TeamScope.objects.create(group=group, agent_patterns=patterns, env_patterns="default\nprod-*")
            if number < 2:
                reviewer.groups.add(group)

    def remove_policies_and_scopes() -> None:
        ApprovalPolicy.objects.all().delete()
        TeamScope.objects.all().delete()
        Group.objects.filter(name__startswith="team ").delete()

    def median_of_queue() -> tuple[float, int, int]:
        for _ in range(3):
            browser.get("/")
        times = []
        for _ in range(options.requests):
            started = time.perf_counter()
            assert browser.get("/").status_code == 200
            times.append(time.perf_counter() - started)
        with CaptureQueriesContext(connection) as queries:
            response = browser.get("/")
        return (
            statistics.median(times) * 1000,
            len(queries.captured_queries),
            response.content.count(b'class="hold-row'),
        )

    medians: dict[str, list[float]] = {"without": [], "with": []}
    shape = {}
    for turn in range(options.rounds):
        for mode in ["without", "with"] if turn % 2 == 0 else ["with", "without"]:
            remove_policies_and_scopes()
            if mode == "with":
                add_policies_and_scopes()
            median, queries, rows = median_of_queue()
            medians[mode].append(median)
            shape[mode] = (queries, rows)
    remove_policies_and_scopes()
    print(f"queue at {options.holds:,} open holds, {options.rounds} rounds of {options.requests} requests")
    print(f"{'':40} {'p50':>9}  queries  rows")
    for mode, label in (("without", "no policies, no scoped groups"), ("with", "20 policies, 5 scoped groups")):
        print(f"{label:40} {statistics.median(medians[mode]):6.2f} ms  {shape[mode][0]:7}  {shape[mode][1]:4}")
    print(f"{'with / without':40} {statistics.median(medians['with']) / statistics.median(medians['without']):6.2f}x")


def page_21(browser, query_start: str) -> str:
    """The cursor of page 21 in the order the query names, by following the pages' "Next page" links."""
    cursor = next_cursor(browser.get(query_start))
    for _ in range(20):
        cursor = next_cursor(browser.get(f"{query_start}after={cursor}"))
    return cursor


def next_cursor(response) -> str:
    """The cursor of the page's "Next page" link ("" on the last page)."""
    found = re.search(r'after=([^"&]+)" rel="next"', response.content.decode())
    return found.group(1) if found else ""


if __name__ == "__main__":
    main()
