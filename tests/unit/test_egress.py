"""The egress client (core.egress.session and the httpx transport the a2a-sdk gets) against a real
aiohttp receiver on 127.0.0.1: a DNS answer that changes between check and connect, IP-literal hosts
(which aiohttp never hands its resolver), the checked address being the one connected to, redirects
answered and never followed, the size cap, what the transport forwards. Names are answered by a
scripted resolver on the running loop; no socket reaches anything but loopback."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from core import egress
from core.egress import WebhookURLError

CAP = 4096


class Receiver:
    def __init__(self) -> None:
        self.hits: list[str] = []
        self.port = 0
        self.last: tuple[dict[str, str], bytes] = ({}, b"")

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.hits.append(request.path)
        body = await request.read()
        self.last = (dict(request.headers), body)
        if request.path == "/redirect":
            return web.Response(status=307, headers={"Location": "/hook"})
        if request.path.startswith("/bytes/"):  # /bytes/<n>[/chunked]
            size = int(request.path.split("/")[2])
            if not request.path.endswith("/chunked"):
                return web.Response(body=b"x" * size)
            resp = web.StreamResponse()
            await resp.prepare(request)
            for start in range(0, size, 1000):
                await resp.write(b"x" * min(1000, size - start))
            return resp
        return web.json_response({"echo": body.decode()}, status=201, headers={"X-Answer": "yes"})


@asynccontextmanager
async def receiver() -> AsyncIterator[Receiver]:
    rx = Receiver()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", rx.handle)
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    assert server.port is not None
    rx.port = server.port
    try:
        yield rx
    finally:
        await server.close()


class ScriptedDNS:
    """The running loop's getaddrinfo for the names in `answers`: one scripted address per lookup, in
    order (other names, and addresses, go to the real resolver)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, answers: dict[str, list[str]]) -> None:
        self.answers = {name: list(addresses) for name, addresses in answers.items()}
        self.asked: list[str] = []
        self._real = loop.getaddrinfo

    async def __call__(self, host: Any, port: Any, **kwargs: Any) -> list[Any]:
        if host not in self.answers:
            return await self._real(host, port, **kwargs)
        self.asked.append(host)
        address = self.answers[host].pop(0)
        if ":" in address:
            return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, int(port), 0, 0))]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port)))]


def scripted_dns(monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[str]]) -> ScriptedDNS:
    loop = asyncio.get_running_loop()
    dns = ScriptedDNS(loop, answers)
    monkeypatch.setattr(loop, "getaddrinfo", dns)
    return dns


def run(body: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(body())


def test_a_name_that_rebinds_between_check_and_connect_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The URL's check sees a public address; the lookup of the connection sees loopback: refused, by
    the aiohttp session (webhooks, HTTPS runs, probes) and by the httpx transport (A2A) alike."""

    async def body() -> None:
        async with receiver() as rx:
            dns = scripted_dns(monkeypatch, {"rebind.test": ["93.184.215.14", "127.0.0.1"] * 2})
            url = f"http://rebind.test:{rx.port}/hook"
            async with egress.session(allow_private=False) as http:
                await egress.check_url(url, allow_private=False)  # passes: a public answer
                with pytest.raises(WebhookURLError, match="non-public"):
                    await http.post(url, data=b"{}", allow_redirects=False)
                await egress.check_url(url, allow_private=False)
                async with httpx.AsyncClient(transport=egress.HttpxTransport(http, CAP)) as client:
                    with pytest.raises(WebhookURLError, match="non-public"):
                        await client.post(url, content=b"{}")
            assert rx.hits == []
            assert dns.asked == ["rebind.test"] * 4

    run(body)


@pytest.mark.parametrize("host", ["127.0.0.1", "[::1]", "[::ffff:127.0.0.1]"])
def test_an_ip_literal_host_is_classified_though_no_resolver_sees_it(host: str) -> None:
    async def body() -> None:
        async with receiver() as rx, egress.session(allow_private=False) as http:
            url = f"http://{host}:{rx.port}/hook"
            with pytest.raises(WebhookURLError, match="non-public"):
                await http.get(url, allow_redirects=False)
            async with httpx.AsyncClient(transport=egress.HttpxTransport(http, CAP)) as client:
                with pytest.raises(WebhookURLError, match="non-public"):
                    await client.get(url)
            assert rx.hits == []

    run(body)


def test_the_connection_goes_to_the_checked_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """One lookup per connection, and its answer is where the request goes: a second lookup would
    answer 127.0.0.2, where nothing listens."""

    async def body() -> None:
        async with receiver() as rx, egress.session(allow_private=True) as http:
            dns = scripted_dns(monkeypatch, {"pinned.test": ["127.0.0.1", "127.0.0.2"]})
            async with http.post(f"http://pinned.test:{rx.port}/hook", data=b"{}", allow_redirects=False) as resp:
                assert resp.status == 201
            assert dns.asked == ["pinned.test"] and rx.hits == ["/hook"]

    run(body)


def test_the_httpx_transport_answers_redirects_and_never_follows_them() -> None:
    async def body() -> None:
        async with receiver() as rx, egress.session(allow_private=True) as http:
            async with httpx.AsyncClient(transport=egress.HttpxTransport(http, CAP)) as client:
                resp = await client.get(f"http://127.0.0.1:{rx.port}/redirect")
            assert (resp.status_code, resp.headers["Location"]) == (307, "/hook")
            assert rx.hits == ["/redirect"]

    run(body)


def test_the_httpx_transport_cuts_an_answer_off_past_its_cap() -> None:
    async def body() -> None:
        async with receiver() as rx, egress.session(allow_private=True) as http:
            base = f"http://127.0.0.1:{rx.port}"
            for path in (f"/bytes/{CAP + 1}", f"/bytes/{CAP + 1}/chunked", f"/bytes/{10 * CAP}/chunked"):
                transport = egress.HttpxTransport(http, CAP)
                async with httpx.AsyncClient(transport=transport) as client:
                    with pytest.raises(egress.TooLarge, match=f"passed {CAP} bytes"):
                        await client.get(base + path)
                assert transport.too_large, path
            transport = egress.HttpxTransport(http, CAP)
            async with httpx.AsyncClient(transport=transport) as client:
                for path in (f"/bytes/{CAP}", f"/bytes/{CAP}/chunked"):
                    assert len((await client.get(base + path)).content) == CAP
            assert not transport.too_large
            assert not http.closed  # closing an httpx client leaves the egress session open

    run(body)


def test_the_httpx_transport_sends_the_request_httpx_built_and_maps_connection_errors() -> None:
    async def body() -> None:
        async with receiver() as rx, egress.session(allow_private=True, user_agent="session-agent/1") as http:
            transport = egress.HttpxTransport(http, CAP)
            async with httpx.AsyncClient(transport=transport, headers={"User-Agent": "a2a-caller/1"}) as client:
                resp = await client.post(f"http://127.0.0.1:{rx.port}/rpc", json={"a": 1}, headers={"X-Job": "j1"})
                headers, sent = rx.last
                assert sent == b'{"a":1}' and headers["Content-Type"] == "application/json"
                assert headers["X-Job"] == "j1" and headers["User-Agent"] == "a2a-caller/1"
                assert headers["Content-Length"] == str(len(sent)) and headers["Host"] == f"127.0.0.1:{rx.port}"
                assert (resp.status_code, resp.headers["X-Answer"], resp.json()) == (201, "yes", {"echo": '{"a":1}'})
                with socket.socket() as unused:  # a loopback port nothing listens on
                    unused.bind(("127.0.0.1", 0))
                    with pytest.raises(httpx.ConnectError):
                        await client.get(f"http://127.0.0.1:{unused.getsockname()[1]}/")

    run(body)
