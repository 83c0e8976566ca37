"""How people are named and their personal preferences (their time zone)."""
