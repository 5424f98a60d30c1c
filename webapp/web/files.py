"""The user's statement files: upload (a plain form and the JSON API), list, preview, delete.

docs/specs.md, "Routes": `/files`, `/files/<file_id>`, `/api/files`. A file's type is sniffed
from its content (webapp/statements); a file that can't be read is refused whole (400,
naming the line or field) and nothing is kept; one over MAX_UPLOAD_BYTES is 413. Another
user's file is a 404 like an unknown one, on every route. File names, contents and rows are
never logged.
"""

from __future__ import annotations

import posixpath
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask.blueprints import BlueprintSetupState
from werkzeug.datastructures import FileStorage
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge
from werkzeug.wrappers import Response as BaseResponse

from ..citations.targets import is_file_id
from ..money import as_decimal
from ..statements import MAPPED, Statement, StatementError, clean_text, parse_statement
from ..store.accounts import list_accounts
from ..store.app_db import get_engine
from ..store.files import (
    StatementFile,
    UnknownAccount,
    delete_file,
    file_rows,
    get_file,
    list_files,
    save_statement,
)
from .auth import api_user_required, current_user, login_required

bp = Blueprint("files", __name__)
api_bp = Blueprint("files_api", __name__, url_prefix="/api/files")
_UPLOADS = frozenset({"files.upload", "files_api.api_upload"})

NO_FILE = "There is no such file."
NO_UPLOAD = "Choose a statement file to upload (CSV, OFX or QFX)."
NOT_YOURS = "That account is not one of your synced accounts."
# A multipart body carries a little more than the file: its boundaries and other fields.
_FORM_OVERHEAD = 64 * 1024


def _limit() -> int:
    return int(current_app.config["MAX_UPLOAD_BYTES"])


def _too_large() -> str:
    megabytes = _limit() / (1024 * 1024)
    return f"The file is larger than {megabytes:g} MB; upload a shorter statement."


def _allow_uploads() -> None:
    # Before any other hook reads the body (the CSRF check reads the form): an upload's body
    # may be as large as MAX_UPLOAD_BYTES, every other request keeps MAX_CONTENT_LENGTH.
    if request.endpoint in _UPLOADS:
        request.max_content_length = _limit() + _FORM_OVERHEAD


def _first_hook(state: BlueprintSetupState) -> None:
    state.app.before_request_funcs.setdefault(None, []).insert(0, _allow_uploads)


bp.record_once(_first_hook)


def _received(account_field: str) -> tuple[bytes, str, str | None]:
    """Read the upload within MAX_UPLOAD_BYTES: its bytes, a clean name, the chosen account."""
    try:
        upload = request.files.get("file")
        chosen = (request.form.get(account_field) or "").strip() or None
    except RequestEntityTooLarge:
        abort(413, _too_large())
    if not isinstance(upload, FileStorage) or not upload.filename:
        abort(400, NO_UPLOAD)
    data = upload.stream.read(_limit() + 1)
    if len(data) > _limit():
        abort(413, _too_large())
    base = posixpath.basename((upload.filename or "").replace("\\", "/"))
    return data, clean_text(base).lstrip("'") or "statement", chosen


def _column_names() -> dict[str, str]:
    """The CSV column names the person gave (`date_column`, ...), each a short line."""
    given = {field: (request.form.get(f"{field}_column") or "")[:64] for field in MAPPED}
    return {field: name for field, name in given.items() if name.strip()}


def _store(data: bytes, name: str, account_id: str | None) -> StatementFile:
    """Parse and keep one upload, or end the request with 400 and keep nothing."""
    try:
        today = datetime.now(UTC).date()
        statement: Statement = parse_statement(data, today, _column_names())
        return save_statement(get_engine(), current_user().id, name, statement, account_id)
    except StatementError as exc:
        abort(400, str(exc))
    except UnknownAccount:
        abort(400, NOT_YOURS)


def _own_file(file_id: str) -> StatementFile:
    found = get_file(get_engine(), current_user().id, file_id) if is_file_id(file_id) else None
    if found is None:
        abort(404, NO_FILE)
    return found


def _accounts() -> list[dict[str, Any]]:
    """The accounts a statement may be attached to: the user's synced (Plaid) ones."""
    return [
        {"id": a["source_account_id"], "label": f"{a['account_name']} · {a['institution_name']}"}
        for a in list_accounts(get_engine(), current_user().id)
        if a.get("source") == "plaid" and isinstance(a.get("source_account_id"), str)
    ]


def _files_page(error: str | None = None, status: int = 200) -> tuple[str, int]:
    files = list_files(get_engine(), current_user().id)
    page = render_template("files.html", files=files, accounts=_accounts(), error=error)
    return page, status


@bp.get("/files")
@login_required
def index() -> tuple[str, int]:
    """List the user's files, with the upload form."""
    return _files_page()


@bp.post("/files")
@login_required
def upload() -> BaseResponse | tuple[str, int]:
    """Upload a statement from the form; its preview opens, or the form says what is wrong."""
    try:
        data, name, account = _received("account")
        kept = _store(data, name, account)
    except HTTPException as exc:
        if exc.code in (400, 413):
            return _files_page(exc.description or NO_UPLOAD, int(exc.code or 400))
        raise
    return redirect(url_for("files.show", file_id=kept.id), 303)


def _back() -> str:
    """The answer this page was opened from (a chat page of this site), else the chat."""
    referrer = urlsplit(request.referrer or "")
    if referrer.netloc == request.host and referrer.path.startswith("/chat/"):
        return referrer.path + (f"?{referrer.query}" if referrer.query else "")
    return url_for("chat.index")


@bp.get("/files/<file_id>")
@login_required
def show(file_id: str) -> str:
    """Preview a file: its parsed rows, the cited ones (`?rows=`) marked and scrolled to."""
    found = _own_file(file_id)
    rows: list[dict[str, Any]] = list(file_rows(get_engine(), current_user().id, found.id))
    for row in rows:
        # Plaid's sign is money out; a person reads money out as a minus.
        amount = as_decimal(row.get("amount"))
        row["shown"] = None if amount is None else -amount
    cited = {part for part in request.args.get("rows", "").split(",") if part}
    first = next((row["transaction_id"] for row in rows if row["transaction_id"] in cited), None)
    return render_template(
        "file.html", file=found, rows=rows, cited=cited, first_cited=first, back=_back()
    )


@bp.post("/files/<file_id>/delete")
@login_required
def remove(file_id: str) -> BaseResponse:
    """Delete a file and its rows, then list the files again."""
    if not is_file_id(file_id) or not delete_file(get_engine(), current_user().id, file_id):
        abort(404, NO_FILE)
    return redirect(url_for("files.index"), 303)


@api_bp.post("")
@api_user_required
def api_upload() -> tuple[Response, int]:
    """Upload a statement: `201 {"id", "name", "format", "rows", "account_id"}`."""
    data, name, account = _received("account_id")
    return jsonify(_store(data, name, account).to_json()), 201


@api_bp.get("")
@api_user_required
def api_list() -> Response:
    """List the user's files, newest first."""
    return jsonify({"files": [f.to_json() for f in list_files(get_engine(), current_user().id)]})


@api_bp.get("/<file_id>")
@api_user_required
def api_show(file_id: str) -> Response:
    """One file, with its parsed rows."""
    found = _own_file(file_id)
    rows = file_rows(get_engine(), current_user().id, found.id)
    return jsonify({**found.to_json(), "transactions": rows})


@api_bp.delete("/<file_id>")
@api_user_required
def api_delete(file_id: str) -> tuple[str, int]:
    """Delete a file and its transactions: 204."""
    if not is_file_id(file_id) or not delete_file(get_engine(), current_user().id, file_id):
        abort(404, NO_FILE)
    return "", 204
