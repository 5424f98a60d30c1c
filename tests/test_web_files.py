"""Statement files: upload through the form and the API, list, preview, delete; a file that
can't be read is refused whole, naming the line; another user's file is a 404 everywhere."""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from tests.support.apps import api_client
from webapp.store.accounts import list_accounts
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate
from webapp.tools.sql.service import run_sql

SAMPLES = Path(__file__).parent / "data" / "statements"
CHASE_CSV = (SAMPLES / "chase-checking.csv").read_bytes()


def soup(response: TestResponse) -> BeautifulSoup:
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def _user_id(app: Flask, username: str) -> int:
    user = authenticate(get_engine(app), username, "demo")
    assert user is not None
    return user.id


@pytest.fixture
def demo(app: Flask, client: FlaskClient) -> FlaskClient:
    with client.session_transaction() as session:
        session["user_id"] = _user_id(app, "demo")
    return client


def _api(app: Flask, username: str = "demo") -> httpx.Client:
    return api_client(app, username).http


def _upload(
    http: httpx.Client, data: bytes, name: str = "statement.csv", **form: str
) -> httpx.Response:
    return http.post("/api/files", files={"file": (name, data)}, data=form)


def _view_rows(app: Flask, username: str, where: str = "") -> list[dict[str, Any]]:
    result = run_sql(
        get_engine(app),
        _user_id(app, username),
        f"SELECT * FROM transaction_details WHERE file_id IS NOT NULL {where}",
        max_rows=1000,
    )
    assert result.error is None, result.error
    return list(result.rows)


@pytest.mark.parametrize(
    ("sample", "format_", "rows"),
    [
        ("chase-checking.csv", "csv", 7),
        ("credit-union.csv", "csv", 3),
        ("bank-1x.ofx", "ofx", 3),
        ("card-2x.qfx", "ofx", 3),
    ],
)
def test_the_api_takes_each_kind_of_statement(
    app: Flask, sample: str, format_: str, rows: int
) -> None:
    # The name says nothing: the type is read from the content.
    response = _upload(_api(app), (SAMPLES / sample).read_bytes(), name="download.txt")
    assert response.status_code == 201, response.text
    body = response.json()
    assert {k: body[k] for k in ("name", "format", "rows", "account_id")} == {
        "name": "download.txt",
        "format": format_,
        "rows": rows,
        "account_id": None,
    }
    kept = _view_rows(app, "demo")
    assert len(kept) == rows
    assert {row["source"] for row in kept} == {"file"}
    assert {row["source_account_id"] for row in kept} == {None}
    assert {row["file_id"] for row in kept} == {body["id"]}
    assert {row["account_name"] for row in kept} == {"download.txt"}


def test_rows_follow_plaids_sign_and_get_a_category(app: Flask) -> None:
    body = _upload(_api(app), CHASE_CSV).json()
    rows = {row["description"]: row for row in _view_rows(app, "demo")}
    safeway = rows["SAFEWAY #1234 SAN FRANCISCO CA"]
    assert float(str(safeway["amount"])) == 54.21  # money out is positive
    assert safeway["subcategory"] == "FOOD_AND_DRINK_GROCERIES"
    pay = next(row for text, row in rows.items() if text.startswith("ACME CORP PAYROLL"))
    assert float(str(pay["amount"])) == -2850.0 and pay["category"] == "INCOME"
    assert body["rows"] == 7


def test_account_numbers_are_masked_before_they_are_kept(app: Flask) -> None:
    _upload(_api(app), CHASE_CSV)
    _upload(_api(app), (SAMPLES / "bank-1x.ofx").read_bytes())
    with get_engine(app).connect() as connection:
        kept = repr(connection.exec_driver_sql("SELECT * FROM transactions").all())
        kept += repr(connection.exec_driver_sql("SELECT * FROM statement_files").all())
    assert "1234567890123" not in kept and "9876543210" not in kept
    assert "4417889012345678" not in kept and "****5678" in kept


def test_a_statement_attached_to_an_account_names_that_account(app: Flask) -> None:
    accounts = list_accounts(get_engine(app), _user_id(app, "demo"))
    checking = next(
        a for a in accounts if a["institution_name"] == "Chase" and a["account_name"] == "Checking"
    )
    response = _upload(_api(app), CHASE_CSV, account_id=str(checking["source_account_id"]))
    assert response.status_code == 201, response.text
    assert response.json()["account_id"] == checking["source_account_id"]
    kept = _view_rows(app, "demo")
    assert {row["source_account_id"] for row in kept} == {checking["source_account_id"]}
    assert {row["source"] for row in kept} == {"plaid"}


def test_another_users_account_cannot_be_chosen(app: Flask) -> None:
    alex = list_accounts(get_engine(app), _user_id(app, "alex"))[0]
    response = _upload(_api(app), CHASE_CSV, account_id=str(alex["source_account_id"]))
    assert response.status_code == 400
    assert not _view_rows(app, "demo") and not _view_rows(app, "alex")


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (b"Date,Description,Amount\n2026-11-01,Coffee,-4.50\n2026-11-02,Tea,abc\n", "Line 3"),
        (b"Date,Description,Amount\n2026-11-01,Coffee,-4.50\n31/31/2026,Tea,-2\n", "Line 3"),
        (b"Date,Description,Amount\n1850-01-01,Old,-1\n", "Line 2"),
        (b"Date,Description,Amount\n2026-11-01,Huge,-1e300\n", "Line 2"),
        (b"When,What,How much\n2026-11-01,Coffee,-4.50\n", "date column"),
        (b"Date,Description\n2026-11-01,Coffee\n", "amount column"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        (b"OFXHEADER:100\r\nDATA:OFXSGML\r\n\r\n<OFX><BANKMSGSRSV1>", "OFX"),
        (
            (SAMPLES / "card-2x.qfx").read_bytes().replace(b"-42.75", b"lots"),
            "TRNAMT",
        ),
    ],
    ids=[
        "amount",
        "date",
        "old-date",
        "absurd-amount",
        "no-date",
        "no-amount",
        "binary",
        "ofx",
        "ofx-field",
    ],
)
def test_a_file_that_cant_be_read_is_refused_whole(app: Flask, data: bytes, named: str) -> None:
    response = _upload(_api(app), data)
    assert response.status_code == 400
    error = response.json()["error"]
    assert named in error
    assert "Error" not in error and "ofxtools" not in error
    assert not _view_rows(app, "demo")
    assert _api(app).get("/api/files").json() == {"files": []}


def test_too_many_rows_are_refused(app: Flask) -> None:
    lines = ["Date,Description,Amount"] + ["2026-11-01,Coffee,-4.50"] * 5001
    response = _upload(_api(app), "\n".join(lines).encode())
    assert response.status_code == 400 and "5000" in response.json()["error"]
    assert not _view_rows(app, "demo")


def test_a_file_over_the_limit_is_413(tmp_path: Path, seeded_sqlite_template: Path) -> None:
    from tests.support.apps import app_on_copy

    small = app_on_copy(seeded_sqlite_template, tmp_path / "db.sqlite", MAX_UPLOAD_BYTES=1000)
    body = b"Date,Description,Amount\n" + b"2026-11-01,Coffee,-4.50\n" * 100
    response = _upload(_api(small), body)
    assert response.status_code == 413
    assert "error" in response.json()
    # Under the limit, a file larger than the app's usual request bound still goes in.
    roomy = app_on_copy(seeded_sqlite_template, tmp_path / "db2.sqlite")
    big = b"Date,Description,Amount\n" + b"2026-11-01,Coffee shop on the corner,-4.50\n" * 3000
    assert len(big) > 65536
    assert _upload(_api(roomy), big).status_code == 201


def test_list_and_delete_and_another_users_file_is_missing(app: Flask) -> None:
    mine = _upload(_api(app), CHASE_CSV).json()
    listed = _api(app).get("/api/files").json()["files"]
    assert [f["id"] for f in listed] == [mine["id"]]
    alex = _api(app, "alex")
    assert alex.get("/api/files").json() == {"files": []}
    assert alex.get(f"/api/files/{mine['id']}").status_code == 404
    assert alex.delete(f"/api/files/{mine['id']}").status_code == 404
    assert _view_rows(app, "demo")
    assert _api(app).delete(f"/api/files/{mine['id']}").status_code == 204
    assert not _view_rows(app, "demo")
    assert _api(app).get(f"/api/files/{mine['id']}").status_code == 404
    with get_engine(app).connect() as connection:
        assert (
            connection.exec_driver_sql(
                "SELECT count(*) FROM transactions WHERE file_ref IS NOT NULL"
            ).scalar()
            == 0
        )


def test_the_form_uploads_without_javascript_and_opens_the_preview(
    app: Flask, demo: FlaskClient
) -> None:
    page = soup(demo.get("/files"))
    form = page.select_one("form.upload-form")
    assert form["enctype"] == "multipart/form-data" and form["method"] == "post"
    token = form.select_one('input[name="csrf_token"]')["value"]
    assert page.select_one('label[for="statement-file"]').get_text() == "Statement file"
    refused = demo.post("/files", data={"file": (io.BytesIO(CHASE_CSV), "nov.csv")})
    assert refused.status_code == 400  # no CSRF token
    response = demo.post(
        "/files", data={"csrf_token": token, "file": (io.BytesIO(CHASE_CSV), "nov.csv")}
    )
    assert response.status_code == 303
    preview = demo.get(response.location)
    assert preview.status_code == 200
    rows = soup(preview).select("table.file-rows tbody tr")
    assert len(rows) == 7
    assert soup(preview).select_one("h1").get_text() == "nov.csv"
    assert soup(preview).find("a", string="← Back to the answer") is not None
    listed = soup(demo.get("/files")).select("table.files-table tbody tr")
    assert len(listed) == 1 and "nov.csv" in listed[0].get_text()


def test_the_form_says_what_is_wrong(demo: FlaskClient) -> None:
    token = soup(demo.get("/files")).select_one('input[name="csrf_token"]')["value"]
    bad = b"Date,Description,Amount\n2026-11-01,Coffee,lots\n"
    response = demo.post("/files", data={"csrf_token": token, "file": (io.BytesIO(bad), "x.csv")})
    assert response.status_code == 400
    assert "Line 2" in soup(response).select_one(".form-error").get_text()


def test_the_preview_marks_the_cited_rows(app: Flask, demo: FlaskClient) -> None:
    body = _upload(_api(app), CHASE_CSV).json()
    rows = _view_rows(app, "demo")
    wanted = [str(rows[2]["transaction_id"]), str(rows[4]["transaction_id"])]
    page = soup(demo.get(f"/files/{body['id']}?rows={','.join(wanted)}"))
    marked = [tr["data-row"] for tr in page.select("tr.cited-row")]
    assert sorted(marked) == sorted(wanted)
    anchor = page.select_one("#cited")
    assert anchor is not None and anchor["data-row"] in wanted


def test_another_users_preview_is_a_404(app: Flask, client: FlaskClient) -> None:
    body = _upload(_api(app), CHASE_CSV).json()
    with client.session_transaction() as session:
        session["user_id"] = _user_id(app, "alex")
    assert client.get(f"/files/{body['id']}").status_code == 404
    assert client.get("/files/not-a-file-id-at-all-here").status_code == 404
    token = soup(client.get("/files")).select_one('input[name="csrf_token"]')["value"]
    gone = client.post(f"/files/{body['id']}/delete", data={"csrf_token": token})
    assert gone.status_code == 404
    assert _view_rows(app, "demo")


HOSTILE = (
    "Date,Description,Amount\n"
    '2026-11-01,"<script>alert(1)</script><img src=x onerror=alert(2)>",-4.50\n'
    '2026-11-02,"=HYPERLINK(""http://evil.example"",""click"")",-1.00\n'
    '2026-11-03,"bell\x07and\x1bescape\u202eflip",-2.00\n'
)


def test_hostile_contents_are_inert_and_never_logged(
    app: Flask, demo: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    body = _upload(_api(app), HOSTILE.encode(), name="<b>evil</b>.csv").json()
    page = demo.get(f"/files/{body['id']}").get_data(as_text=True)
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert "&lt;script&gt;" in page
    descriptions = [str(row["description"]) for row in _view_rows(app, "demo")]
    formula = next(d for d in descriptions if "HYPERLINK" in d)
    assert formula.startswith("'=")
    assert not any(ch in d for d in descriptions for ch in "\x07\x1b\u202e")
    assert "<b>" not in soup(demo.get("/files")).select_one(
        "table.files-table"
    ).decode_contents().replace("&lt;b&gt;", "")
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "HYPERLINK" not in logged and "alert" not in logged and "evil" not in logged


def test_hostile_descriptions_stay_inert_in_an_answer(app: Flask, client: FlaskClient) -> None:
    from tests.support.apps import idle_after
    from tests.support.waiting import wait_for

    hostile = HOSTILE + '2026-11-04,"[click](javascript:alert(3)) <iframe src=//x>",-3.00\n'
    alex = api_client(app, "alex")
    assert _upload(alex.http, hostile.encode(), name="evil.csv").status_code == 201
    with idle_after(app):
        session_id = alex.new_session()
        asked = alex.ask(session_id, "What were my largest purchases in my uploaded file?")
        alex.stream(asked["stream_url"])
    wait_for(lambda: alex.wait_done(session_id), "the answer did not finish")
    with client.session_transaction() as session:
        session["user_id"] = _user_id(app, "alex")
    page = soup(client.get(f"/chat/{session_id}"))
    answer = page.select("article.message.assistant")[-1]
    html = answer.decode_contents()
    assert "HYPERLINK" in answer.get_text()  # the row is reported, as text
    assert not answer.select("script, iframe, img[onerror]")
    assert not any(
        str(a.get("href", "")).lower().startswith("javascript:") for a in answer.select("a")
    )
    assert "<script>alert(1)" not in html


UNRECOGNISED = b"When,What,How much\n2026-11-01,SAFEWAY #1,-12.50\n2026-11-02,Coffee,-4.00\n"


def test_columns_the_header_does_not_name_are_mapped_in_the_form(
    app: Flask, demo: FlaskClient
) -> None:
    assert _upload(_api(app), UNRECOGNISED).status_code == 400  # not recognised alone
    mapped = {"date_column": "When", "description_column": "What", "amount_column": "how much"}
    response = _upload(_api(app), UNRECOGNISED, **mapped)
    assert response.status_code == 201, response.text
    assert response.json()["rows"] == 2
    rows = {row["description"]: row for row in _view_rows(app, "demo")}
    assert float(str(rows["SAFEWAY #1"]["amount"])) == 12.5
    wrong = _upload(_api(app), UNRECOGNISED, **{**mapped, "amount_column": "Sum"})
    assert wrong.status_code == 400 and '"Sum"' in wrong.json()["error"]
    page = soup(demo.get("/files"))
    for label in ("Date column", "Description column", "Amount column"):
        assert page.find("label", string=label) is not None
