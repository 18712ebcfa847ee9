"""The webhook channel of the outbox: a signed POST of the stored body bytes.

Each attempt carries X-Service-Signature and the Standard Webhooks headers (core.egress); the
target is checked again at delivery time and connected to through an egress session, so a DNS
answer that changed since the URL was accepted cannot reach a private address. Success is a 2xx
answer within `timeout` seconds; redirects are not followed.
"""

from __future__ import annotations

import aiohttp

from core import egress
from core.outbox.channel import Attempt
from core.store.outbox import Delivery

USER_AGENT = "agentledger-webhooks/1"


class WebhookChannel:
    name = "webhook"

    def __init__(self, allow_private: bool = False, timeout: float = 10.0) -> None:
        self.allow_private = allow_private
        self.timeout = timeout
        self._http: aiohttp.ClientSession | None = None
        #: URLs that passed check_url_static (a pure function of the URL and allow_private: no DNS, so
        #: its answer cannot change; the session still checks every connection's addresses).
        self._checked: set[str] = set()

    async def start(self, concurrency: int) -> None:
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        self._http = egress.session(self.allow_private, limit=concurrency, timeout=timeout, user_agent=USER_AGENT)

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def send(self, d: Delivery, now: float) -> Attempt:
        assert self._http is not None, "start() the channel first"
        try:
            if d.url not in self._checked:
                egress.check_url_static(d.url, self.allow_private)
                if len(self._checked) >= 10_000:
                    self._checked.clear()
                self._checked.add(d.url)
            headers = {
                "Content-Type": "application/json",
                "X-Service-Signature": egress.sign_service(d.body, d.secret),
                **egress.standard_headers(d.event_id, int(now), d.body, d.secret),
            }
            async with self._http.post(d.url, data=d.body, headers=headers, allow_redirects=False) as resp:
                if 200 <= resp.status < 300:
                    return Attempt(True, resp.status, None)
                return Attempt(False, resp.status, f"HTTP {resp.status}")
        except TimeoutError:
            return Attempt(False, None, f"no answer within {self.timeout:g} s")
        except egress.WebhookURLError as exc:
            return Attempt(False, None, str(exc))
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            return Attempt(False, None, f"{type(exc).__name__}: {exc}")
