"""Reviewing holds: the platform client, the mirror of the open holds, the queue, claims and decisions.

Owns delivering each decision exactly once and expiring holds; work is queued by task name through ``queueing.py``.
"""
