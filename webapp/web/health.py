"""Health checks for whoever runs the service: is the process serving, is it ready to.

`/healthz` answers while the process serves and touches nothing else (a liveness probe must
not fail because the database is slow: restarting would not help). `/readyz` answers 200 only
when the database answers and its schema is the code's (`flask --app webapp init-db` brings
it there); a load balancer sends traffic only then. Neither shows a user's data or a setting.
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from flask import Blueprint, Response, jsonify

from ..services import services
from ..store.migrate import current_revision, head_revision

log = logging.getLogger(__name__)

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Response:
    """Say the process serves."""
    return jsonify(status="ok")


@bp.get("/readyz")
def readyz() -> tuple[Response, int]:
    """Say whether the database answers and is at the schema this code expects."""
    checks: dict[str, str] = {}
    engine = services().engine
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
        checks["database"] = "ok"
    except sa.exc.SQLAlchemyError as exc:
        log.warning("readiness: the database did not answer (%s)", type(exc).__name__)
        checks["database"] = "the database did not answer"
        return jsonify(status="unavailable", checks=checks), 503
    at, head = current_revision(engine), head_revision()
    checks["schema"] = (
        "ok" if at == head else f"at revision {at}, the code needs {head}: run init-db"
    )
    ready = all(v == "ok" for v in checks.values())
    return jsonify(status="ready" if ready else "unavailable", checks=checks), 200 if ready else 503
