"""Running the same step in several threads at one moment, as two browsers or two beats would."""

import threading

from django.db import connection


def at_once(*calls):
    """Run each call (a function taking no argument) in its own thread, all released together; their results, in order.

    Each thread closes its own database connection when done. Tests using this need
    ``django_db(transaction=True)``, so that the threads see the test's rows.
    """
    results, start = [None] * len(calls), threading.Barrier(len(calls))

    def run(position, call):
        start.wait()
        try:
            results[position] = call()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(position, call)) for position, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results
