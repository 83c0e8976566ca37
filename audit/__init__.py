"""The append-only, hash-chained audit trail: what shaped each decision's fate, sign-ins and admin changes.

The other apps record through ``audit.events``; audit imports only their models, for lookups.
"""
