"""Reading an iterator ahead of its consumer, in a thread, so that the iterator's waits overlap the consumer's work.

Sync lists the platform page by page and writes each batch of holds to the database:
read ahead, the next pages arrive while the database takes the last batch, instead of
each side idling while the other works.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator

_ITEM, _RAISED, _ENDED = "item", "raised", "ended"
_PUT_WAIT = 0.05  # seconds between looks at whether the consumer stopped, while the producer waits for room


def read_ahead[T](items: Iterable[T], depth: int) -> Iterator[T]:
    """The items of ``items`` in their order, made by a thread that keeps up to ``depth`` ready ahead of the consumer.

    An exception raised while making an item is raised to the consumer in that
    item's place. When the consumer stops early (it raises, or closes this
    generator), the thread stops before making another item and is joined: the
    item under way is finished first, so making one must not block for long (a
    network read with a timeout does not). The thread must not use what the consumer
    uses meanwhile, such as the same HTTP client; a database connection is per thread.
    """
    ready: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=depth)
    stopped = threading.Event()

    def put(entry: tuple[str, object]) -> bool:
        while not stopped.is_set():
            try:
                ready.put(entry, timeout=_PUT_WAIT)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((_ITEM, item)):
                    return
        except BaseException as error:  # handed to the consumer, which raises it
            put((_RAISED, error))
            return
        put((_ENDED, None))

    producer = threading.Thread(target=produce, name="read-ahead", daemon=True)
    producer.start()
    try:
        while True:
            kind, value = ready.get()
            if kind == _ENDED:
                return
            if kind == _RAISED:
                raise value
            yield value
    finally:
        stopped.set()
        producer.join()
