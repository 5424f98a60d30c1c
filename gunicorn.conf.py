"""gunicorn's settings for the web process: the Procfile and `python3 dev.py run` use this file.

Workers are gevent's: an open answer stream is a greenlet waiting on a wake-up, not a thread,
so a worker holds thousands of streams while still answering every other request (gunicorn's
design notes name streaming responses and long polling as the case for async workers).
What blocks in C (the model's SQLite queries) runs on gevent's thread pool instead
(`webapp.tools.offload`); see docs in README.md, "Serving".
"""

from __future__ import annotations

import os
import signal
from types import FrameType
from typing import Any

worker_class = "gevent"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
# Open connections per worker: every open answer stream is one.
worker_connections = int(os.environ.get("WORKER_CONNECTIONS", "5000"))
# A reload or shutdown lets running requests finish for this long; running turns are handed
# over at once (see `worker_exit`), so no answer waits for it.
graceful_timeout = 30
keepalive = 5
# gunicorn 25+ opens a control socket, by default at one path per user
# (~/.gunicorn/gunicorn.ctl) that every gunicorn of that user shares, so two of them (a
# deploy's old and new master, or tests side by side) would take it from each other. Nothing
# here uses the control interface (`gunicornc`); signals do the reloads.
control_socket_disable = True
# Only the proxies FORWARDED_ALLOW_IPS names may say a request came over HTTPS, as in the app
# (webapp/web/proxy.py). gunicorn's own default trusts 127.0.0.1 and ::1 when it is unset, and
# any peer on a UNIX socket whatever it is set to; unset here, no peer is trusted, so a client
# on the same host cannot earn HSTS and a Secure cookie by sending `X-Forwarded-Proto: https`.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "").strip()
if not forwarded_allow_ips:
    secure_scheme_headers: dict[str, str] = {}
    forwarder_headers = ""


def post_worker_init(worker: Any) -> None:
    """Start this worker's turn sweeper and its listener for other workers' writes.

    And hear the worker's `SIGTERM` (a `SIGHUP` reload sends it to every old worker) as it
    comes: gunicorn's own handler only stops accepting and waits up to `graceful_timeout`
    for open requests, which open answer streams would fill; the app hands its turns over
    and ends its streams at once instead (`ChatService.stop_serving`).
    """
    import gevent

    from webapp.app import start_worker, worker_stopping

    gunicorns = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        if callable(gunicorns):
            gunicorns(signum, frame)
        # In a greenlet of its own: the handler runs in gevent's loop, where nothing may block
        # (gunicorn's gevent worker does the same with its SIGQUIT).
        gevent.spawn(worker_stopping, worker.wsgi)

    signal.signal(signal.SIGTERM, on_sigterm)
    signal.siginterrupt(signal.SIGTERM, False)  # as gunicorn has it: requests go on meanwhile
    # A SIGTERM that came while the worker booted (a deploy right after a start) reached
    # gunicorn's own handler alone, which clears `alive`: then the worker takes over no turn
    # (another worker's hand-over would be started here, only to be handed over again at
    # exit, its model call wasted) and stops serving at once.
    start_worker(worker.wsgi, serving=lambda: bool(worker.alive))
    if not worker.alive:
        gevent.spawn(worker_stopping, worker.wsgi)


def worker_exit(server: Any, worker: Any) -> None:
    """Stop the worker's background jobs as it exits."""
    from webapp.app import stop_worker

    stop_worker(worker.wsgi)
