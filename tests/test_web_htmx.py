"""htmx's request headers, read through one typed helper."""

from __future__ import annotations

import pytest
from flask import Flask

from webapp.web.htmx import HtmxDetails, htmx_details


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, HtmxDetails()),
        ({"HX-Request": "true"}, HtmxDetails(request=True)),
        ({"HX-Request": "false"}, HtmxDetails()),
        ({"HX-Request": "TRUE"}, HtmxDetails()),
        (
            {
                "HX-Request": "true",
                "HX-Boosted": "true",
                "HX-Target": "conversation",
                "HX-Trigger": "composer",
                "HX-Trigger-Name": "message",
                "HX-Current-URL": "http://x/chat/1",
                "HX-History-Restore-Request": "true",
            },
            HtmxDetails(True, True, "conversation", "composer", "message", "http://x/chat/1", True),
        ),
    ],
    ids=["none", "request", "explicit-false", "not-exactly-true", "all"],
)
def test_htmx_details(app: Flask, headers: dict[str, str], expected: HtmxDetails) -> None:
    with app.test_request_context(headers=headers):
        details = htmx_details()
    assert details == expected
    assert bool(details) is expected.request
