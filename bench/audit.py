"""The audit list and its CSV export at 1,000,000 events: server time, and the query plans.

    .venv/bin/python -m bench.audit [--events 1000000] [--requests 20] [--plans]

Writes the events in SQL (one INSERT … SELECT over generate_series, with the
indexes dropped and rebuilt around it), then times list pages and exports
through Django's handler in this process (no network), and prints the
EXPLAIN ANALYZE of the query behind each. The generated rows carry no valid
hash chain (``verifyaudit`` would reject them; the chain is tested in
tests/audit/test_audit.py): they exist to measure the queries. Ten events make one
hold's story: seen, claimed, decided, delivered (sometimes retried), applied
or not, plus a sign-in, a release and a notification.
"""

import argparse
import csv
import io
import time
import warnings
from datetime import timedelta

from bench import setup

AGENTS = [
    "llamaindex-support",
    "upsonic-support",
    "support-agno",
    "support-openai-agents",
    "crewai-billing",
    "langgraph-returns",
]
REVIEWERS = 20
DAYS = 180

GENERATE = """
INSERT INTO audit_auditevent (sequence, at, kind, actor_id, actor_name, env, hold_id, run_id, agent, hold_record_id,
                              decision_id, actions, outcome, item_ids, search_text, payload, prev_hash, hash)
SELECT g, at, kind, CASE WHEN by_person THEN reviewer END, CASE WHEN by_person THEN name ELSE '' END, 'default',
       CASE WHEN about_hold THEN 'h_' || story ELSE '' END, CASE WHEN about_hold THEN 'r_' || story ELSE '' END,
       CASE WHEN about_hold THEN agent ELSE '' END, NULL, NULL,
       CASE WHEN kind = 'decision_submitted' THEN action ELSE '' END, outcome,
       CASE WHEN has_items THEN jsonb_build_array(item) ELSE '[]'::jsonb END,
       CASE WHEN has_items THEN lower('h_' || story || E'\\nr_' || story || E'\\n' || item || E'\\n' || order_id
                                      || E'\\n' || amount) ELSE '' END,
       CASE WHEN has_items THEN jsonb_build_object('items', jsonb_build_array(jsonb_build_object(
           'id', item, 'action', action, 'original_data', jsonb_build_object('order_id', order_id, 'amount', amount))))
            ELSE jsonb_build_object('outcome', outcome) END,
       encode(sha256(int8send(g::bigint - 1)), 'hex'), encode(sha256(int8send(g::bigint)), 'hex')
FROM (
    SELECT g, story, reviewers[1 + story %% cardinality(reviewers)] AS reviewer,
           names[1 + story %% cardinality(names)] AS name,
           agents[1 + story %% cardinality(agents)] AS agent,
           now() - make_interval(secs => %(seconds)s * (1 - g::float8 / %(events)s)) AS at,
           (ARRAY['hold_seen', 'claimed', 'decision_submitted', 'delivery_attempt', 'delivery_attempt', 'applied',
                  'signed_in', 'released', 'notification_sent', 'claimed'])[1 + g %% 10] AS kind,
           (ARRAY['approve', 'approve', 'approve', 'edit', 'reject'])[1 + story %% 5] AS action,
           CASE WHEN g %% 10 = 3 THEN (CASE WHEN story %% 7 = 0 THEN 'retry' ELSE 'applied' END)
                WHEN g %% 10 IN (4, 5) THEN (CASE WHEN story %% 11 = 0 THEN 'decided_elsewhere' ELSE 'applied' END)
                ELSE '' END AS outcome,
           'call_' || story AS item, 'A-' || (100000 + story) AS order_id, ((story %% 30000) / 100.0)::text AS amount,
           g %% 10 IN (1, 2, 6, 7, 9) AS by_person, g %% 10 <> 6 AS about_hold, g %% 10 IN (0, 2) AS has_items
    FROM generate_series(1, %(events)s) AS g, LATERAL (SELECT g / 10 AS story) AS s,
         (SELECT %(reviewers)s::int[] AS reviewers, %(names)s::text[] AS names, %(agents)s::text[] AS agents) AS c
) AS rows
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=20)
    options = parser.parse_args()
    setup.DATABASE = "reviewqueue_bench_audit"  # its own database: other benchmarks drop theirs while this one runs
    setup.django_on_fresh_database()

    from django.test import Client
    from django.test.utils import setup_test_environment

    from reviewqueue import roles
    from tests.helpers.users import make_user

    setup_test_environment()  # records each response's template context
    warnings.filterwarnings("ignore", "No directory at")  # WhiteNoise: no collectstatic here
    people = [make_user(f"reviewer{n:02d}", roles.REVIEWERS) for n in range(REVIEWERS)]
    generate(options.events, people)
    browser = Client()
    browser.force_login(make_user("bench-auditor", roles.AUDITORS))

    month_ago = time_of_event(options.events, options.events - options.events // 6).date()
    story = options.events // 20
    deep = cursor_after_pages(browser, 20)
    print(
        f"\nThe audit list at {options.events:,} events ({options.requests} requests each; "
        "times are the whole request):"
    )
    for label, query in [
        ("first page, no filter", ""),
        ("reviewer", f"reviewer={people[3].pk}"),
        ("agent + event kind", "agent=support-agno&kind=decision_submitted"),
        ("item action: reject", "action=reject"),
        ("outcome: decided elsewhere", "outcome=decided_elsewhere"),
        ("one day, a month ago", f"since={month_ago}&until={month_ago}"),
        ("hold id", f"hold=h_{story}"),
        ("run id", f"run=r_{story}"),
        ("item id", f"item=call_{story}"),
        ("value inside item data", f"q=A-{100000 + story}"),
        ("page 21 (keyset)", f"after={deep}"),
    ]:
        list_page(browser, label, query, options.requests)
    print("\nThe CSV export (streamed in keyset chunks of 2,000):")
    for label, query in [
        ("one reviewer, 30 days", f"reviewer={people[3].pk}&since={month_ago}"),
        ("one agent's decisions, all time", "agent=support-agno&kind=decision_submitted"),
    ]:
        export(browser, label, query)


def generate(events: int, people) -> None:
    from django.db import connection

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'audit_auditevent' "
            "AND indexname NOT IN ('audit_auditevent_pkey', 'audit_auditevent_sequence_key')"
        )
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX "{name}"')
        cursor.execute(
            GENERATE,
            {
                "events": events,
                "seconds": DAYS * 86400,
                "reviewers": [p.pk for p in people],
                "names": [p.username for p in people],
                "agents": AGENTS,
            },
        )
        inserted = time.perf_counter()
        for _, definition in indexes:
            cursor.execute(definition)
        cursor.execute(
            "UPDATE audit_auditchainhead SET sequence = %s, hash = encode(sha256(int8send(%s::bigint)), 'hex')",
            [events, events],
        )
        cursor.execute("ANALYZE audit_auditevent")
    print(
        f"generated {events:,} events in {inserted - started:.1f} s, "
        f"rebuilt {len(indexes)} indexes in {time.perf_counter() - inserted:.1f} s"
    )


def time_of_event(events: int, sequence: int):
    from django.utils import timezone

    return timezone.localtime(timezone.now() - timedelta(seconds=DAYS * 86400 * (1 - sequence / events)))


def cursor_after_pages(browser, pages: int) -> str:
    cursor = ""
    for _ in range(pages):
        cursor = browser.get(f"/audit/?after={cursor}").context["next_cursor"]
    return cursor


def list_page(browser, label: str, query: str, requests: int) -> None:
    from django.db import connection
    from django.http import QueryDict
    from django.test.utils import CaptureQueriesContext

    from audit import queries

    url = f"/audit/?{query}"
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        response = browser.get(url)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200
    with CaptureQueriesContext(connection) as captured:
        browser.get(url)
    print(
        f"\n{label:34} {setup.summary(times)}  {len(captured.captured_queries)} queries  "
        f"rows={len(response.context['rows'])}"
    )
    params = QueryDict(query)
    events = queries.filtered(queries.Filters.from_query(params))
    position = queries.decode(params.get("after", ""))
    if position:
        events = events.filter(queries.older_than(*position))
    explain(events.defer(*queries.LIST_COLUMNS_DEFERRED)[: queries.PAGE_SIZE + 1])


def export(browser, label: str, query: str) -> None:
    from django.http import QueryDict

    from audit import queries

    started = time.perf_counter()
    response = browser.get(f"/audit/export.csv?{query}")
    body = b"".join(response.streaming_content)
    elapsed = time.perf_counter() - started
    rows = len(list(csv.reader(io.StringIO(body.decode())))) - 1
    print(f"\n{label:34} {rows:,} rows, {len(body) / 1e6:.1f} MB in {elapsed:.2f} s ({rows / elapsed:,.0f} rows/s)")
    events = queries.filtered(queries.Filters.from_query(QueryDict(query)))
    explain(events.defer("search_text")[: queries.EXPORT_CHUNK])


def explain(queryset) -> None:
    for line in queryset.explain(analyze=True, buffers=True).splitlines():
        print(f"    {line}")


if __name__ == "__main__":
    main()
