"""The one error of the service: a refused request, whatever carried it (HTTP, MCP, a job).

Use cases raise ServiceError; the HTTP adapter answers it as the flat ACP error shape
`{"type", "code", "message", "param"}` with `status` (plus `extra` fields and `headers`), and the
MCP adapter as a tool error carrying the same code. It is defined here, below every transport,
so that rules and transactions in core/ refuse requests in the shape callers see.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.store.types import unavailable


class ServiceError(Exception):
    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        type_: str = "invalid_request",
        param: str | None = None,
        replayable: bool = True,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.type = type_
        self.param = param
        #: False: a refusal that says "not now" (another request holds what this one needs), not stored
        #: under an Idempotency-Key, so a retry with the same key really runs (core.idempotency).
        self.replayable = replayable
        #: Response headers that belong to this refusal (Retry-After, WWW-Authenticate).
        self.headers: dict[str, str] = dict(headers or {})
        #: Fields after the four of the error shape (e.g. retry_after_seconds).
        self.extra: dict[str, Any] = dict(extra or {})

    def shape(self) -> dict[str, Any]:
        """The error body: type, code, message, param, then any extra fields."""
        return {"type": self.type, "code": self.code, "message": self.message, "param": self.param, **self.extra}


def chain_unavailable() -> ServiceError:
    """503 with a fixed message: the underlying exception's text can carry the RPC URL (with its API
    key) or internal host names, so callers log it and answer this."""
    return ServiceError(503, "chain_unavailable", "the chain node does not answer; retry later", type_="service_error")


#: Seconds a client is told to wait (Retry-After) before retrying a call the database could not take.
DATABASE_RETRY_AFTER = 2


def database_unavailable() -> ServiceError:
    """503 while the database is out of reach (restarting, failing over, its connections cut or past their
    time limits): nothing of the call was committed, and the same call may be sent again."""
    return ServiceError(
        503,
        "database_unavailable",
        "the database is unavailable; nothing was done, retry later",
        type_="service_error",
        headers={"Retry-After": str(DATABASE_RETRY_AFTER)},
    )


def unexpected(exc: Exception) -> ServiceError:
    """The answer to an exception no handler refused: 503 database_unavailable when it is the database out
    of reach for now, else 500 internal_error (logged by the caller, never shown)."""
    if unavailable(exc):
        return database_unavailable()
    return ServiceError(500, "internal_error", "internal server error", type_="service_error")
