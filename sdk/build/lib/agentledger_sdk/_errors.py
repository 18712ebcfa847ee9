"""Typed exceptions carrying the API's one error shape: {type, code, message, param}."""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

__all__ = [
    "AgentLedgerError",
    "AuthenticationError",
    "Conflict",
    "ConnectionError",
    "InvalidRequest",
    "NotFound",
    "PermissionDenied",
    "RateLimited",
    "ServerError",
    "TimeoutError",
    "TransportError",
]


class AgentLedgerError(Exception):
    """Base of every error the SDK raises for a call that did not succeed.

    ``status`` is the HTTP status (None when no response arrived); ``type``, ``code``,
    ``message`` and ``param`` are the server's error body. ``idempotency_key`` is the key the
    call was sent with (if any): retrying later with the same key can never apply it twice.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        type: str | None = None,
        code: str | None = None,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        idempotency_key: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = type
        self.code = code
        self.param = param
        self.headers: dict[str, str] = dict(headers or {})
        self.body = body
        self.idempotency_key = idempotency_key

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asked the client to wait (``Retry-After``), if it said."""
        return parse_retry_after(self.headers.get("retry-after"))

    def __str__(self) -> str:
        parts = [f"{self.status}" if self.status is not None else None, self.code, self.message]
        text = " ".join(p for p in parts if p)
        return f"{text} (param: {self.param})" if self.param else text

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, type={self.type!r}, code={self.code!r}, "
            f"message={self.message!r}, param={self.param!r})"
        )


class AuthenticationError(AgentLedgerError):
    """401: no API key, a malformed one, or one the server does not know."""


class PermissionDenied(AgentLedgerError):
    """403: the key is valid but its scope does not allow the call."""


class NotFound(AgentLedgerError):
    """404: no such agent for this key (another account's agent looks the same), or no such route."""


class Conflict(AgentLedgerError):
    """409, e.g. ``idempotency_in_flight``: the original request with this key is still running."""


class InvalidRequest(AgentLedgerError):
    """400, 413 or 422: the request was refused as it stands (bad field, too large, insufficient
    balance, ``idempotency_conflict``...). Retrying the same request cannot succeed."""


class RateLimited(AgentLedgerError):
    """429: too many requests; ``retry_after`` says how long to wait."""


class ServerError(AgentLedgerError):
    """5xx: the server failed; nothing was stored under the idempotency key, so a retry is safe."""


class TransportError(AgentLedgerError):
    """No (complete) response: connection refused or reset, or the response was lost.

    When the request may have reached the server, only a retry with the same
    ``idempotency_key`` is safe."""


class ConnectionError(TransportError):
    """The connection could not be made or was lost."""


class TimeoutError(TransportError):
    """The server did not answer within the client's timeout."""


_BY_STATUS: dict[int, type[AgentLedgerError]] = {
    400: InvalidRequest,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: InvalidRequest,
    422: InvalidRequest,
    429: RateLimited,
}


def error_class(status: int) -> type[AgentLedgerError]:
    if status >= 500:
        return ServerError
    return _BY_STATUS.get(status, AgentLedgerError)


def error_from_response(
    status: int, headers: Mapping[str, str], content: bytes, idempotency_key: str | None
) -> AgentLedgerError:
    """The typed exception for an error response; a body that is not the error shape (a proxy's
    HTML page, say) still gives the right class, with ``code`` ``http_<status>``."""
    body: Any = None
    try:
        body = json.loads(content) if content else None
    except ValueError:
        body = None
    lowered = {k.lower(): v for k, v in headers.items()}
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        fields = {
            "type": _str(body.get("type")),
            "code": _str(body.get("code")),
            "param": _str(body.get("param")),
        }
        message = body["message"]
    else:
        kind = "service_error" if status >= 500 else "invalid_request"
        fields = {"type": kind, "code": f"http_{status}", "param": None}
        text = content[:200].decode("utf-8", "replace").strip()
        message = text or f"HTTP {status}"
    return error_class(status)(
        message, status=status, headers=lowered, body=body, idempotency_key=idempotency_key, **fields
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    now = _dt.datetime.now(when.tzinfo or _dt.UTC)
    return max(0.0, (when - now).total_seconds())
