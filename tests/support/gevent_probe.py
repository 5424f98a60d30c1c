"""Run one blocking operation under gevent's monkey patching and count how often another
greenlet ran meanwhile. Used by tests/test_gevent_cooperation.py as a subprocess, because
patching must happen before anything else is imported (as gunicorn's gevent worker does).

    python tests/support/gevent_probe.py CASE DATABASE_URL

Prints one JSON object: {"ticks": <runs of the other greenlet during the operation>,
"result": <what the operation returned>}.
"""

from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import gevent  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

TICK = 0.005


def _psycopg(url: str) -> object:
    import psycopg
    from sqlalchemy.engine import make_url

    conninfo = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo) as conn:
        return conn.execute("SELECT pg_sleep(0.4), 'slept'").fetchone()[1]


def _pool(url: str) -> object:
    import sqlalchemy as sa

    engine = sa.create_engine(url, pool_size=1, max_overflow=0, pool_timeout=10)
    holder = engine.connect()

    def release() -> None:
        gevent.sleep(0.4)
        holder.close()

    gevent.spawn(release)
    with engine.connect() as conn:  # waits for the one pooled connection
        return conn.execute(sa.text("SELECT 'pooled'")).scalar()


def _sqlite_tool(url: str) -> object:
    from webapp.store.engine import create_store_engine
    from webapp.store.users import authenticate
    from webapp.tools.sql.service import run_sql

    engine = create_store_engine(url)
    user = authenticate(engine, "demo", "demo")
    assert user is not None
    query = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 2000000) "
        "SELECT count(*) AS n FROM c"
    )
    result = run_sql(engine, user.id, query, timeout=30)
    return result.error or result.rows[0]["n"]


def _sandbox(_url: str) -> object:
    from webapp.tools.python.run import run_python

    result = run_python("import time\ntime.sleep(0.4)\nprint('slept')")
    return result.error or result.stdout.strip()


def _turns(url: str) -> object:
    from webapp import create_app
    from webapp.chat.conversations import create_session
    from webapp.services import chat_service
    from webapp.store.app_db import get_engine
    from webapp.store.users import authenticate

    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "probe", "ANTHROPIC_API_KEY": None})
    engine = get_engine(app)
    user = authenticate(engine, "demo", "demo")
    assert user is not None
    service = chat_service(app)
    questions = [
        "What do I owe on my credit cards?",
        "What is AAPL trading at?",
        "How is the gain on selling my home taxed?",
    ]
    asked = []
    for question in questions:
        session_id = create_session(engine, user.id).id
        asked.append((session_id, service.ask(user.id, session_id, question)))
    statuses = []
    for session_id, message_id in asked:
        last = None
        for event in service.events(user.id, session_id, message_id):
            if event is not None:
                last = event
        statuses.append(json.loads(last.data)["status"] if last else None)
    return statuses


def _claude_stop(_url: str) -> object:
    """A turn stopped mid-answer: another greenlet closes the model while its reader waits."""
    from tests.support.fake_claude import FakeClaude, Paced, text_reply
    from webapp.llm.base import ModelError, ModelRequest
    from webapp.llm.claude import ClaudeModel

    slow = Paced(text_reply(("A long answer. " * 20, [])), 30.0)
    with FakeClaude([slow]) as fake:
        model = ClaudeModel("sk-probe", base_url=fake.url, model="claude-probe")
        question = [{"role": "user", "content": "What do I owe?"}]
        events = model.stream(ModelRequest(system="s", messages=question, tools=[], max_tokens=64))
        next(events)  # the answer has begun; the next event is 30 s away
        ended: list[str] = []

        def read() -> None:
            try:
                list(events)
            except ModelError as exc:
                ended.append(str(exc))

        reader = gevent.spawn(read)
        gevent.sleep(0.1)  # the reader is now blocked on the socket
        try:
            model.close()
        except Exception as exc:  # what a stop must never do
            return f"close raised {type(exc).__name__}: {exc}"
        reader.join(timeout=20)
        return ended[0] if ended else "the reader did not end"


CASES: dict[str, Callable[[str], object]] = {
    "claude_stop": _claude_stop,
    "psycopg": _psycopg,
    "pool": _pool,
    "sqlite_tool": _sqlite_tool,
    "sandbox": _sandbox,
    "turns": _turns,
}


def main() -> None:
    case, url = sys.argv[1], sys.argv[2]
    ticks = 0
    running = True

    def tick() -> None:
        nonlocal ticks
        while running:
            ticks += 1
            gevent.sleep(TICK)

    ticker = gevent.spawn(tick)
    gevent.sleep(0)  # let it start
    before = ticks
    result = CASES[case](url)
    during = ticks - before
    running = False
    ticker.join()
    print(json.dumps({"ticks": during, "result": result}))


if __name__ == "__main__":
    main()
