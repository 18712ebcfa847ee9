"""What the dispatcher needs of a delivery channel (webhook, e-mail)."""

from __future__ import annotations

from typing import NamedTuple, Protocol

from core.store.outbox import Delivery


class Attempt(NamedTuple):
    """One attempt's outcome: success, the receiver's status (HTTP, SMTP) or None when there was no
    answer, and the error text of a failure."""

    ok: bool
    status: int | None
    error: str | None


class Channel(Protocol):
    #: The `channel` value of the outbox rows it sends.
    name: str

    async def start(self, concurrency: int) -> None: ...

    async def close(self) -> None: ...

    async def send(self, d: Delivery, now: float) -> Attempt: ...
