"""Read htmx's request headers through one typed helper, never as scattered raw strings."""

from __future__ import annotations

from dataclasses import dataclass

from flask import Request, request


def _flag(value: str | None) -> bool:
    return value == "true"


@dataclass(frozen=True, slots=True)
class HtmxDetails:
    """What htmx says about a request (https://htmx.org/reference/#request_headers)."""

    request: bool = False
    boosted: bool = False
    target: str | None = None
    trigger: str | None = None
    trigger_name: str | None = None
    current_url: str | None = None
    history_restore: bool = False

    def __bool__(self) -> bool:
        return self.request


def htmx_details(req: Request | None = None) -> HtmxDetails:
    """Return the htmx headers of `req` (the current request by default)."""
    headers = (req if req is not None else request).headers
    return HtmxDetails(
        request=_flag(headers.get("HX-Request")),
        boosted=_flag(headers.get("HX-Boosted")),
        target=headers.get("HX-Target"),
        trigger=headers.get("HX-Trigger"),
        trigger_name=headers.get("HX-Trigger-Name"),
        current_url=headers.get("HX-Current-URL"),
        history_restore=_flag(headers.get("HX-History-Restore-Request")),
    )
