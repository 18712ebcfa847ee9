"""The drop's notices through the outbox's e-mail channel, received by a real SMTP server (aiosmtpd)
that requires STARTTLS (its certificate checked against a CA file) and AUTH: the right recipients
for each notice (seller on offers and settlement, the buyer at settlement, stakers on listing and on
a commit), plain-text and HTML bodies, List-Unsubscribe, and an unsubscribed address left out.
Without SMTP configured, each message is an .eml file under the data directory."""

from __future__ import annotations

import asyncio
import datetime
import email
import email.policy
import ipaddress
import ssl
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from core.anvil import free_port
from core.config import Settings
from core.outbox.email import MailDirChannel, build_message
from core.store.outbox import Delivery
from tests.integration.chainkit import System
from tests.integration.drop_kit import BASE, DAY, USDC, World, running, seller_pair


def self_signed(tmp: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "smtp.pem", tmp / "smtp.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@dataclass
class Inbox:
    got: list[tuple[list[str], email.message.EmailMessage, bool]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
        self.got.append((list(envelope.rcpt_tos), msg, bool(session.authenticated)))  # type: ignore[arg-type]
        return "250 OK"

    def to(self, address: str) -> list[str]:
        return [str(m["Subject"]) for rcpt, m, _ in self.got if address in rcpt]


def authenticator(server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> AuthResult:
    return AuthResult(success=auth_data.login == b"drop" and auth_data.password == b"s3cret")


def test_notices_reach_the_right_recipients_over_starttls(system: System, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    inbox = Inbox()
    port = free_port()
    smtp = Controller(
        inbox,
        hostname="127.0.0.1",
        port=port,
        tls_context=tls,
        require_starttls=True,
        authenticator=authenticator,
        auth_required=True,
    )
    smtp.start()
    settings = Settings(
        webhook_allow_private="true",
        data_dir=tmp_path,
        smtp_url=f"smtp://drop:s3cret@127.0.0.1:{port}",
        smtp_ca_file=str(cert),
        smtp_from="agentledger drop <drop@example.com>",
    )
    try:
        asyncio.run(_flow(tmp_path, system, settings, inbox))
    finally:
        smtp.stop()


async def _flow(tmp_path: Path, system: System, settings: Settings, inbox: Inbox) -> None:
    async with running(tmp_path, system, settings=settings) as w:
        await _notices(w, inbox)


async def _wait(w: World, check: Any, timeout: float = 20.0) -> None:
    await w.until(check, timeout)


async def _notices(w: World, inbox: Inbox) -> None:
    s = w.system
    seller, buyer = s.users[0], s.users[1]
    ref = await w.ok("POST", "/api/keys", {"email": "referrer@example.com"}, 201)
    ref_key = ref["api_key"]
    _, _, _ = await w.register("referrer", key=ref_key)
    refwallet = w.db.execute(
        "SELECT referral_code FROM wallet_agents a JOIN api_keys k ON k.account_id = a.account_id WHERE k.email = ?",
        ("referrer@example.com",),
    ).fetchall()[0][0]
    reg = await w.ok(
        "POST", "/api/agents/register", {"name": "sold", "specialty": "content_seo", "referralCode": refwallet}, 201
    )
    key, wallet = reg["api_key"], reg["agent"]["wallet"]
    token = await w.mint(key, wallet, seller, seller_pair(0)[1])
    watcher_key, _, _ = await w.register("watcher")
    await w.ok("POST", f"{BASE}/watch", {"agentId": wallet, "email": "Watcher@Example.com"}, 201, key=watcher_key)

    listing = await w.list(key, wallet, seller, token, 500 * USDC, 10 * USDC, sellerEmail="seller@example.com")
    await _wait(w, lambda: len(inbox.to("referrer@example.com")) == 1 and len(inbox.to("watcher@example.com")) == 1)
    rcpts, msg, authed = inbox.got[0]
    assert authed and len(rcpts) == 1
    assert msg["From"] == "agentledger drop <drop@example.com>"
    assert msg.get_content_type() == "multipart/alternative"
    kinds = [p.get_content_type() for p in msg.iter_parts()]  # type: ignore[attr-defined]
    assert kinds == ["text/plain", "text/html"]
    assert "is listed for sale" in str(msg["Subject"])
    assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert inbox.to("seller@example.com") == []  # the seller is not told of its own listing

    # an offer: the seller is e-mailed
    buyer_key, _, _ = await w.register("buyer")
    w.fund(buyer, 500 * USDC)
    offer = {**w.offer_body(listing, buyer, 100 * USDC, 1), "buyerEmail": "buyer@example.com"}
    await w.ok("POST", f"{BASE}/offer", offer, 201, key=buyer_key)
    await _wait(w, lambda: len(inbox.to("seller@example.com")) == 1)
    assert "New offer of 100 USDC" in inbox.to("seller@example.com")[0]

    # the watcher unsubscribes with the link of its e-mail (one-click POST)
    watcher_mail = next(m for r, m, _ in inbox.got if "watcher@example.com" in r)
    link = str(watcher_mail["List-Unsubscribe"]).strip("<>")
    token_q = link.split("token=")[1]
    assert (await w.ok("POST", f"{BASE}/unsubscribe", params={"token": token_q}))["unsubscribed"] is True

    # a buyer commits: stakers told (referrer, the offer's holder), not the unsubscribed watcher
    tx = w.buy(buyer, listing["chainListingId"])
    await w.ok("POST", f"{BASE}/accept", {"listingId": listing["id"], "buyNow": True, "txHash": tx}, 201, key=buyer_key)
    await _wait(w, lambda: len(inbox.to("referrer@example.com")) == 2 and len(inbox.to("buyer@example.com")) == 1)
    assert "committed" in inbox.to("buyer@example.com")[0]
    s.advance(7 * DAY + 1)
    await w.sweep_when_due("settle", listing["chainListingId"])
    await _wait(w, lambda: len(inbox.to("seller@example.com")) == 2)
    assert "is sold" in inbox.to("seller@example.com")[1]
    await asyncio.sleep(0.3)
    assert len(inbox.to("watcher@example.com")) == 1  # only the listing notice, before it unsubscribed
    every = sorted(r for rcpt, _, _ in inbox.got for r in rcpt)
    assert every == sorted(
        ["referrer@example.com"] * 2 + ["watcher@example.com"] + ["seller@example.com"] * 2 + ["buyer@example.com"]
    )


def test_without_smtp_each_message_is_an_eml_file(tmp_path: Path) -> None:
    body = build_message(
        event_id="evt_1",
        sender="a <a@example.com>",
        to="b@example.com",
        subject="hello",
        text="plain",
        html="<p>html</p>",
        unsubscribe_url="http://x/u?token=t",
        now=time.time(),
    )
    d = Delivery(1, "evt_1", "drop.offer", "listing:x", "mailto:b@example.com", "", body, 0, 0.0, 0.0, "email", "m")
    channel = MailDirChannel(tmp_path / "mail")
    got = asyncio.run(channel.send(d, time.time()))
    assert got.ok
    msg = email.message_from_bytes((tmp_path / "mail" / "evt_1.eml").read_bytes(), policy=email.policy.default)
    assert msg["To"] == "b@example.com" and msg["Message-ID"] == "<evt_1@agentledger>"
    assert asyncio.run(channel.send(d, time.time())).ok  # a resend replaces the same file
    assert [p.name for p in (tmp_path / "mail").iterdir()] == ["evt_1.eml"]
