"""What a use case receives: the process's shared parts, made once where the process is put together
(api.app.create_app) and handed to every operation's run, every job and every feature's install.

An HTTP request, an MCP tool call and a background job reach a feature through this one object, so
nothing a feature does depends on the transport that carried the call, and nothing under core/ knows
the web server. A feature's own long-lived context (the checkout's, hire's, the drop's) is registered
here by its install and found by its type: `services.part(Hire)`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from core.config import Settings
from core.deployments import Deployment
from core.errors import ServiceError
from core.store.committer import GroupCommitter
from core.store.reads import Reads

if TYPE_CHECKING:  # the operator's module loads web3 and eth_account: the indexer needs neither
    from core.operator import Operator

__all__ = ["FeatureContext", "Services"]

T = TypeVar("T")


@dataclass
class Services:
    """The parts every feature shares. `reads` and `writer` exist only in a process with a database (an
    app without one serves health, schema and cards); asking for them there is a programming error."""

    deployment: Deployment
    settings: Settings
    rpc_url: str
    #: Seconds since the epoch; tests inject their own.
    clock: Callable[[], float]
    database_reads: Reads | None = None
    database_writer: GroupCommitter | None = None
    #: The service's transaction sender, one per process so every transaction of the operator key
    #: shares one nonce sequence.
    operator_sender: Operator | None = None
    #: AGENTLEDGER_PUBLIC_URL: the base of every published link (None: the request's own host, local only).
    public_url: str | None = None
    #: Whether outbound calls may reach private addresses (a local chain's development setting only).
    allow_private: bool = False
    #: Test seams (api.http.Hooks); every field None in production.
    hooks: Any = None
    #: Wakes the outbox dispatcher: a delivery was just committed (no-op without one).
    wake: Callable[[], None] = lambda: None
    _parts: dict[type, Any] = field(default_factory=dict)

    @property
    def chain_id(self) -> int:
        return self.deployment.chain_id

    @property
    def reads(self) -> Reads:
        if self.database_reads is None:
            raise RuntimeError("this process has no database")
        return self.database_reads

    @property
    def writer(self) -> GroupCommitter:
        if self.database_writer is None:
            raise RuntimeError("this process has no database")
        return self.database_writer

    @property
    def operator(self) -> Operator:
        if self.operator_sender is None:
            raise RuntimeError("this process has no operator")
        return self.operator_sender

    @property
    def has_database(self) -> bool:
        return self.database_reads is not None

    def provide(self, part: T) -> T:
        """Register `part` (a feature's context) so runs find it by its type; answers it."""
        self._parts[type(part)] = part
        return part

    def part(self, kind: type[T]) -> T:
        """The registered part of type `kind` (a feature's context)."""
        try:
            return self._parts[kind]  # type: ignore[no-any-return]
        except KeyError:
            raise ServiceError(501, "not_installed", f"{kind.__name__} is not installed in this process") from None

    def find(self, kind: type[T]) -> T | None:
        """The registered part of type `kind`, or None: for what only some processes have (the jobs
        runner and the liveness of a process with a database, the MCP endpoint of a full app). The
        plumbing's own runs (/healthz, the schema, the cards) find these as parts rather than fields, so
        Services stays what every feature shares and a part lives beside the module that makes it."""
        return self._parts.get(kind)


@dataclass
class FeatureContext:
    """The base of a feature's long-lived context (the checkout's, hire's, the drop's): it holds the
    Services, so its install passes them once, and names the parts its use cases run with."""

    services: Services

    @property
    def reads(self) -> Reads:
        """Committed reads (lookups before a transaction, GETs): `await reads.run(fn)`."""
        return self.services.reads

    @property
    def writer(self) -> GroupCommitter:
        """Every write (the group committer: synchronous=FULL)."""
        return self.services.writer

    @property
    def operator(self) -> Operator:
        return self.services.operator

    @property
    def chain_id(self) -> int:
        return self.services.chain_id

    def clock(self) -> float:
        return self.services.clock()
