"""The mirror: the platform's client (the one module that knows the wire format), syncing open holds into the
database, quarantine of holds that cannot be stored, the runs behind holds and the amount each hold is sorted by."""
