"""Egress: every HTTP call to a URL a tenant chose (webhooks, provider runs and their health probes,
A2A agents) and to the operator's IPFS node. Which targets may be called, the one client that calls
them, and the signatures the calls carry (no database; the retry schedule is the outbox's).

Every signed call (a webhook, a provider run) carries two signatures over the same exact body bytes:

- ``X-Service-Signature: sha256=<hex>``: HMAC-SHA256 of the body, keyed with the secret's UTF-8
  bytes (the checkout spec's header).
- Standard Webhooks (https://www.standardwebhooks.com): ``webhook-id`` (our event id, the same on
  every retry), ``webhook-timestamp`` (unix seconds of this attempt) and ``webhook-signature:
  v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">``. The spec serialises keys as
  ``whsec_<base64>``; ours are arbitrary text (a 64-hex secret by default), and the HMAC key is
  the secret's UTF-8 bytes, exactly as for X-Service-Signature. A receiver using a Standard
  Webhooks library passes ``standard_secret(secret)`` (= "whsec_" + base64 of those bytes).
  Receivers check both with the SDK's agentledger_sdk.webhooks (verify_service, verify_standard).

Target URLs must be http(s) without credentials, and unless private targets are allowed every
address the host resolves to must be globally routable (no loopback, private, link-local,
multicast, reserved or unspecified address, also when embedded in IPv6): `forbidden_address`
decides, for the check when a URL is accepted and for every connection.

The client is aiohttp's, made by `session`: its resolver (`PinnedResolver`) resolves once, refuses,
and hands aiohttp the checked addresses to connect to, so a DNS answer that changes between check
and connect (rebinding) cannot reach a private address; aiohttp never asks a resolver about an
IP-literal host, so the session's middleware classifies those. Callers pass allow_redirects=False (a
redirect is an answer, never followed; were one followed, its hop would be pinned alike). The
a2a-sdk takes only an httpx client: `HttpxTransport` gives it one over an egress session (the same
pin and pool). One stack, and aiohttp's: 32 concurrent POSTs to a loopback receiver ran at 6,000-8,000
a second with aiohttp and at 380 with httpx 0.28 (httpcore's pool; 1,400 one at a time), and the
outbox's webhook throughput rides on it.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import ipaddress
import logging
import secrets
import socket
from urllib.parse import urlsplit

import aiohttp
import httpx
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.helpers import is_ip_address

from core.errors import ServiceError
from core.networks import LOCAL_CHAIN_ID

log = logging.getLogger("agentledger.egress")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class WebhookURLError(ValueError):
    """A webhook URL that may not be used as a target: malformed (scheme, credentials, port), or
    `refused` (well-formed, but its address is not public or its host does not resolve)."""

    def __init__(self, message: str, *, refused: bool = False) -> None:
        super().__init__(message)
        self.refused = refused


#: What a well-formed webhook URL looks like (check_url_static's syntax, as /api/schema shows it):
#: http(s), a host without credentials or brackets, an optional port 1-65535, then a path, query
#: or fragment. Whether its target may be called is the refusal `webhook_url_refused` (422).
URL_PATTERN = (
    r"^[Hh][Tt][Tt][Pp][Ss]?://[^\s/?#@\[\]:\\\x00-\x1f\x7f-\x9f]+"
    r"(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?"
    r"([/?#][^\s\x00-\x1f\x7f-\x9f]*)?$"
)


def url_error(exc: WebhookURLError, param: str) -> ServiceError:
    """A WebhookURLError as the API answers it: 400 invalid_webhook_url for a malformed URL, 422
    webhook_url_refused for a target the SSRF rules refuse (or that does not resolve)."""
    if exc.refused:
        return ServiceError(422, "webhook_url_refused", str(exc), param=param)
    return ServiceError(400, "invalid_webhook_url", str(exc), param=param)


async def check_webhook_url(url: str, allow_private: bool, param: str) -> None:
    """check_url, its refusal as url_error answers it under `param` (it resolves DNS: never inside a
    transaction)."""
    try:
        await check_url(url, allow_private)
    except WebhookURLError as exc:
        raise url_error(exc, param) from exc


def new_secret() -> str:
    """32 random bytes, hex: the default webhook secret."""
    return secrets.token_hex(32)


# ---- signatures ---------------------------------------------------------------------------------


def _hmac(secret: str, message: bytes) -> bytes:
    # the digest by name: OpenSSL's own SHA-256, not a Python-level constructor call (a third faster)
    return hmac.new(secret.encode("utf-8"), message, "sha256").digest()


def sign_service(body: bytes, secret: str) -> str:
    """The X-Service-Signature header value: "sha256=" + hex HMAC-SHA256 of the exact body."""
    return "sha256=" + _hmac(secret, body).hex()


def standard_secret(secret: str) -> str:
    """The same key in Standard Webhooks' "whsec_<base64>" form, for receivers using their libraries."""
    return "whsec_" + base64.b64encode(secret.encode("utf-8")).decode()


def standard_signature(event_id: str, timestamp: int, body: bytes, secret: str) -> str:
    signed = f"{event_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(_hmac(secret, signed)).decode()


def standard_headers(event_id: str, timestamp: int, body: bytes, secret: str) -> dict[str, str]:
    return {
        "webhook-id": event_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": standard_signature(event_id, timestamp, body, secret),
    }


# ---- target URLs --------------------------------------------------------------------------------


def allow_private_for(setting: str, chain_id: int) -> bool:
    """Settings.webhook_allow_private: "true", "false", or "auto" (allowed only on the local dev
    chain, core.networks.LOCAL_CHAIN_ID 31337: make run and the tests. Any other chain, known or
    not, is treated as production: an unknown chain id is not evidence of a dev machine)."""
    value = setting.strip().lower()
    if value in ("true", "1", "yes", "on"):
        return True
    if value in ("false", "0", "no", "off"):
        return False
    if value == "auto":
        return chain_id == LOCAL_CHAIN_ID
    raise ValueError(f"webhook_allow_private must be auto, true or false, not {setting!r}")


def forbidden_address(ip: IPAddress) -> bool:
    """True for anything but a globally routable unicast address, including IPv4 addresses embedded
    in IPv6 (mapped ::ffff:a.b.c.d, 6to4, Teredo, NAT64 64:ff9b::/96)."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded: list[ipaddress.IPv4Address] = []
        if ip.ipv4_mapped is not None:
            embedded.append(ip.ipv4_mapped)
        if ip.sixtofour is not None:
            embedded.append(ip.sixtofour)
        if ip.teredo is not None:
            embedded.extend(ip.teredo)
        if ip in _NAT64:
            embedded.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        if any(forbidden_address(v4) for v4 in embedded):
            return True
        if ip.ipv4_mapped is not None or ip in _NAT64:
            return False  # the embedded address decides (NAT64 is "reserved" in ipaddress's tables)
        if ip.is_site_local:
            return True
    return (
        not ip.is_global
        or ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


def _ip_literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def check_url_static(url: str, allow_private: bool) -> str:
    """The checks that need no DNS: http(s), a host, no credentials, a valid port, and an IP-literal
    host's address. Returns the host name (lower case, no brackets)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise WebhookURLError(f"webhook_url is not a valid URL: {exc}") from None  # urlsplit's own words: no DNS
    if parts.scheme.lower() not in ("http", "https"):
        raise WebhookURLError("webhook_url must use http or https")
    host = parts.hostname
    if not host:
        raise WebhookURLError("webhook_url has no host")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise WebhookURLError("webhook_url must not contain credentials (user:password@)")
    if port == 0:
        raise WebhookURLError("webhook_url has port 0")
    ip = _ip_literal(host)
    if ip is not None and not allow_private and forbidden_address(ip):
        raise WebhookURLError(
            "webhook_url points to a non-public address; private targets are not allowed", refused=True
        )
    return host


def _refuse_any(host: str, addresses: list[str]) -> None:
    """Refuse when any address is non-public. The message never names the address (what an internal
    name resolves to is not the caller's business): it goes to the log."""
    for text in addresses:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
        if forbidden_address(ip):
            log.warning("webhook host %r refused: resolves to non-public %s", host, ip)
            raise WebhookURLError(
                f"webhook_url host {host!r} resolves to a non-public address; private targets are not allowed",
                refused=True,
            )


def _port_of(url: str) -> int:
    parts = urlsplit(url)
    return parts.port or (443 if parts.scheme.lower() == "https" else 80)


async def check_url(url: str, allow_private: bool) -> None:
    """Refuse (WebhookURLError) a URL that may not be a target: `check_url_static`, then every address
    its host resolves to (on the running loop's default executor, not blocking it)."""
    host = check_url_static(url, allow_private)
    if allow_private or _ip_literal(host) is not None:
        return
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, _port_of(url), type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        log.info("webhook host %r does not resolve: %s", host, exc)
        raise WebhookURLError(f"webhook_url host {host!r} does not resolve", refused=True) from None
    _refuse_any(host, [str(info[4][0]) for info in infos])


# ---- the client ---------------------------------------------------------------------------------


class PinnedResolver(AbstractResolver):
    """The resolver of egress sessions: resolves once, refuses the host if ANY of its addresses is
    non-public (unless allow_private), and returns exactly the checked addresses, which aiohttp
    then connects to without resolving again. (aiohttp never asks a resolver about IP-literal
    hosts: the session's middleware classifies those.)"""

    def __init__(self, allow_private: bool) -> None:
        self.allow_private = allow_private

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM, family=family)
        results: list[ResolveResult] = []
        for fam, _type, proto, _canon, sockaddr in infos:
            if fam == socket.AF_INET6 and len(sockaddr) >= 4 and sockaddr[3]:
                address = f"{sockaddr[0]}%{sockaddr[3]}"  # keep the scope of a link-local address
            else:
                address = str(sockaddr[0])
            results.append(
                ResolveResult(
                    hostname=host,
                    host=address,
                    port=int(sockaddr[1]),
                    family=fam,
                    proto=proto,
                    flags=socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
                )
            )
        if not self.allow_private:
            _refuse_any(host, [r["host"] for r in results])
        if not results:
            raise OSError(f"{host} has no address")
        return results

    async def close(self) -> None:
        return None


async def _refuse_literal(req: aiohttp.ClientRequest, handler: aiohttp.ClientHandlerType) -> aiohttp.ClientResponse:
    """The session's middleware: an IP-literal host (aiohttp connects to those without a resolver; its
    own test says which) is classified here, on every request and every hop."""
    host = req.url.raw_host or ""
    if is_ip_address(host) and _ip_literal(host.split("%", 1)[0]) is not None:
        _refuse_any(host, [host])
    return await handler(req)


def session(
    allow_private: bool,
    *,
    limit: int = 100,
    timeout: aiohttp.ClientTimeout | None = None,
    user_agent: str | None = None,
) -> aiohttp.ClientSession:
    """An egress session (made in the running loop; its owner closes it): every connection goes to
    addresses the classifier passed (unless allow_private), at most `limit` at once, `timeout` by
    default aiohttp's. Answers are read as sent (no decompression, so a cap counts the bytes on the
    wire; a call may ask for auto_decompress=True)."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(resolver=PinnedResolver(allow_private), limit=limit),
        timeout=timeout,
        headers={"User-Agent": user_agent} if user_agent else None,
        auto_decompress=False,
        middlewares=() if allow_private else (_refuse_literal,),
    )


async def read_capped(resp: aiohttp.ClientResponse, cap: int) -> bytes | None:
    """The body, or None as soon as it passes `cap` bytes (the rest is never read)."""
    if resp.content_length is not None and resp.content_length > cap:
        return None
    out = bytearray()
    async for chunk in resp.content.iter_chunked(64 * 1024):
        out += chunk
        if len(out) > cap:
            return None
    return bytes(out)


class TooLarge(Exception):
    pass


#: What aiohttp writes itself from the URL and the body.
_OWN_HEADERS = frozenset({b"host", b"content-length", b"transfer-encoding"})


class HttpxTransport(httpx.AsyncBaseTransport):
    """httpx's transport over an egress session (the a2a-sdk takes only an httpx client): the same pin,
    pool and timeouts (httpx's own are not applied; a run is bounded by its SLA). Each answer is read
    whole; past `cap` bytes TooLarge is raised and `too_large` set (the a2a-sdk wraps errors in its
    own). Closing the client leaves the session open."""

    def __init__(self, http: aiohttp.ClientSession, cap: int) -> None:
        self._http, self.cap, self.too_large = http, cap, False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        headers = [
            (k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw if k.lower() not in _OWN_HEADERS
        ]
        body = await request.aread() or None  # none: no Content-Length on a GET, as httpx sends it
        try:
            async with self._http.request(
                request.method, str(request.url), headers=headers, data=body, allow_redirects=False
            ) as resp:
                content = await read_capped(resp, self.cap)
                status, answered = resp.status, resp.raw_headers
        except aiohttp.ClientConnectorError as exc:
            raise httpx.ConnectError(str(exc), request=request) from exc
        except aiohttp.ClientError as exc:
            raise httpx.ReadError(f"{type(exc).__name__}: {exc}", request=request) from exc
        if content is None:
            self.too_large = True
            raise TooLarge(f"the answer passed {self.cap} bytes")
        return httpx.Response(status, headers=answered, stream=httpx.ByteStream(content))
