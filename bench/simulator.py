"""How fast the simulated platform pages through its open holds, on PlatformState directly (no HTTP).

    .venv/bin/python -m bench.simulator [--holds 10000 100000] [--max-pages N]

A sync of 100,000 holds reads 1,000 pages of 100; each page must cost the same whatever
the number of holds. Prints, per size, the time to generate the holds, the median and
slowest page, and the whole walk (or the first N pages with --max-pages).
"""

import argparse
import statistics
import time

from simulator.state import MAX_PAGE, PlatformState


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--holds", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--max-pages", type=int, default=None, help="stop after this many pages")
    options = parser.parse_args()
    for count in options.holds:
        state = PlatformState()
        started = time.perf_counter()
        state.generate("default", count)
        generated = time.perf_counter() - started
        pages, listed, cursor = [], 0, None
        while options.max_pages is None or len(pages) < options.max_pages:
            started = time.perf_counter()
            holds, cursor = state.list_open("default", limit=MAX_PAGE, cursor=cursor)
            pages.append(time.perf_counter() - started)
            listed += len(holds)
            if cursor is None:
                break
        print(
            f"{count:7,d} holds: generated in {generated:6.2f} s; {len(pages):5d} pages of {MAX_PAGE}: "
            f"median {statistics.median(pages) * 1000:7.2f} ms, max {max(pages) * 1000:7.2f} ms, "
            f"total {sum(pages):7.2f} s ({listed:,d} holds listed)"
        )


if __name__ == "__main__":
    main()
