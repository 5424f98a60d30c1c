"""Count what PostgreSQL is asked, message by message: libpq's trace of each pooled connection.

A round trip is a message the client then waits on: a simple `Query` (psycopg's `BEGIN`,
`COMMIT` and `ROLLBACK`) or the `Sync` that ends an extended-protocol statement. SQLAlchemy's
events can't tell these apart (they fire for a `BEGIN` that autocommit never sends), so
this reads what went over the wire instead. A `Sync` that ends no `Execute` is psycopg
preparing a statement on the server, once per connection, the fifth time that connection
runs it (`prepare_threshold`): such a trip is kept apart (`prepared`), since which request
meets it depends only on which pooled connection it happened to check out.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine


@dataclass
class Trips:
    """The round trips seen, each as the start of its statement (as sent, or last parsed)."""

    sent: list[str] = field(default_factory=list)
    prepared: list[str] = field(default_factory=list)  # one-time prepares (see above)

    @property
    def count(self) -> int:
        return len(self.sent)


@contextmanager
def round_trips(engine: Engine, *, this_thread: bool = True) -> Iterator[Trips]:
    """Trace the engine's PostgreSQL connections while the block runs; yield what they sent.

    With `this_thread`, only connections checked out by the calling thread (a request in
    Flask's test client), not those of background turns.
    """
    trips = Trips()
    thread = threading.get_ident()
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
        traced: list[Any] = []

        def checkout(dbapi: Any, _record: object, _proxy: object) -> None:
            if not this_thread or threading.get_ident() == thread:
                dbapi.pgconn.trace(log.fileno())
                traced.append(dbapi)

        def checkin(dbapi: Any, _record: object) -> None:
            if dbapi in traced:
                dbapi.pgconn.untrace()
                traced.remove(dbapi)

        sa.event.listen(engine.pool, "checkout", checkout)
        sa.event.listen(engine.pool, "checkin", checkin)
        try:
            yield trips
        finally:
            sa.event.remove(engine.pool, "checkout", checkout)
            sa.event.remove(engine.pool, "checkin", checkin)
            for dbapi in traced:
                dbapi.pgconn.untrace()
            log.flush()
            log.seek(0)
            statement, executed = "", False
            for line in log:
                fields = line.rstrip("\n").split("\t")
                if len(fields) >= 4 and fields[1] == "F":
                    kind, rest = fields[3], " ".join(fields[4:]).strip()
                    if kind == "Parse":  # its name, then the statement
                        statement = rest.split(" ", 1)[-1]
                    elif kind == "Execute":
                        executed = True
                    elif kind == "Query":
                        trips.sent.append(rest.strip()[:80])
                    elif kind == "Sync":
                        (trips.sent if executed else trips.prepared).append(statement.strip()[:80])
                        executed = False
