"""bench.capacity: a team's whole day under Locust (see __main__.py)."""
