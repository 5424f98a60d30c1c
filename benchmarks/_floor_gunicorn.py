"""gunicorn settings for the floor: every setting of the app's config file, but not its hooks.

The app's config file (`BENCH_GUNICORN_CONFIG`, the Procfile's `-c`, else ./gunicorn.conf.py)
may carry server hooks that start the app's own background jobs; the floor has none, so only
plain values (worker class, workers, connections, timeouts, ...) are taken over.
"""

from __future__ import annotations

import os
import runpy
from types import ModuleType

_path = os.environ.get("BENCH_GUNICORN_CONFIG", "")
if _path and os.path.exists(_path):
    for _name, _value in runpy.run_path(_path).items():
        if _name.startswith("_") or callable(_value) or isinstance(_value, ModuleType):
            continue
        globals()[_name] = _value
