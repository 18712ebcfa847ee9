"""What the hire use cases run with: the shared Services (the store's two sides, the operator (the
escrow's oracle), the chain, the clock), the outbound HTTP client of the runners and the test seams
(built once by the runtime; no request objects)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import aiohttp

from core import egress
from core.services import FeatureContext

USER_AGENT = "agentledger-hire/1"


@dataclass
class Seams:
    """Test seams; every field is None in production. Tests hold a run there (to race another
    request) or end the process there (a crash between two steps)."""

    #: Awaited once a job is reserved (standard) or accepted (escrow), before the provider is called.
    before_run: Callable[[str], Awaitable[None]] | None = None
    #: Called once an escrow job's output is committed (status releasing), before the release is sent.
    after_output: Callable[[str], None] | None = None
    #: Called once the release transaction is mined, before it is recorded.
    after_release: Callable[[str], None] | None = None


@dataclass
class Hire(FeatureContext):
    seams: Seams = field(default_factory=Seams)
    #: Escrow job ids this process is running or settling (the settle job leaves them alone).
    busy: set[str] = field(default_factory=set)
    _http: aiohttp.ClientSession | None = None

    def has_escrow(self) -> bool:
        try:
            self.operator.contract("AgentEscrow")
        except KeyError:
            return False
        return True

    @property
    def escrow_address(self) -> str:
        return str(self.operator.contract("AgentEscrow").address)

    def http(self) -> aiohttp.ClientSession:
        """The runners' egress session (created in the running loop), of HTTPS runs, A2A calls and
        health probes alike: the SSRF rules on every connection; redirects are never followed."""
        if self._http is None or self._http.closed:
            self._http = egress.session(self.services.allow_private, limit=256, user_agent=USER_AGENT)
        return self._http

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None
