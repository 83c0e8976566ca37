"""Related holds and possible duplicates: what an item acts on (``holds/related/subjects.py``), the subjects stored
per hold (``holds/related/stored.py``), the holds sharing one (``holds/related/related.py``) and the possible
duplicates among them (``holds/related/duplicates.py``)."""
