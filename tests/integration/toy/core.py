"""The toy's core: its context and its rule (what core/<feature>/ holds: no web server, no request)."""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import ServiceError
from core.store import Conn
from core.store.events import Event


@dataclass(frozen=True)
class Greeter:
    """What the toy runs with, made once by its install from the shared services."""

    greeting: str


def greet(greeter: Greeter, name: str, agents: int) -> str:
    if not name.isalpha():
        raise ServiceError(400, "invalid_name", "a name is letters only", param="name")
    return f"{greeter.greeting}, {name}: {agents} agent{'s' * (agents != 1)} here"


class GreetingFollower:
    """Its follower of final chain events (none of its own contracts: it is handed nothing)."""

    name = "toy"
    contracts: frozenset[str] = frozenset()

    def apply(self, conn: Conn, chain_id: int, event: Event) -> None:
        return None
