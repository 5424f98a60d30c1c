"""One file per schema revision; see `webapp/migrations/__init__.py` for the chain."""
