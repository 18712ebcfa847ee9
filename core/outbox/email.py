"""The e-mail channel of the outbox: a message written with the change it announces, sent at least
once through the dispatcher (its retry schedule and dead letters), over real SMTP or into files.

`enqueue_email` stores the whole RFC 5322 message (plain text and HTML alternatives, a
Message-ID made of the event id so a resend is recognisably the same message, List-Unsubscribe
with its one-click variant) as the row's body; the row's target is `mailto:<address>`.

Two ways out, chosen by configuration (`channel_for`):
- `SmtpChannel` (AGENTLEDGER_SMTP_URL): `smtp://user:password@host:587` sends over STARTTLS (the
  server must offer it: a plain-text session is refused, so credentials never travel in clear),
  `smtps://...:465` over implicit TLS; AUTH when the URL carries a user. Certificates are checked
  (against AGENTLEDGER_SMTP_CA_FILE when set). A 2xx reply to the whole transaction is success.
- `MailDirChannel` (no SMTP configured, `make run`): each message becomes `<event id>.eml` under
  `<data dir>/mail/`, readable by any mail client; writing the same event again replaces the file.

Breaker: the host of every e-mail row is the relay (`MAIL_HOST`). No answer (refused, timeout,
TLS failure) and 421 count against it; a refused recipient (any other 4xx/5xx reply) does not:
the relay answered, the row retries on its own schedule.
"""

from __future__ import annotations

import email.utils
import os
import ssl
import urllib.parse
from email.message import EmailMessage
from email.policy import SMTP
from pathlib import Path
from typing import NamedTuple

import aiosmtplib

from core.outbox import new_event_id
from core.outbox.channel import Attempt
from core.store import Conn
from core.store import outbox as store
from core.store.outbox import Delivery

EMAIL = "email"
#: The breaker key of every e-mail row: they all go through one relay (or one directory).
MAIL_HOST = "mail-relay"
DEFAULT_FROM = "agentledger <noreply@agentledger.invalid>"


def build_message(
    *, event_id: str, sender: str, to: str, subject: str, text: str, html: str, unsubscribe_url: str, now: float
) -> bytes:
    """The message bytes (CRLF line ends, as SMTP sends them)."""
    msg = EmailMessage(policy=SMTP)
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = email.utils.formatdate(now, usegmt=True)
    msg["Message-ID"] = f"<{event_id}@agentledger>"
    msg["List-Unsubscribe"] = f"<{unsubscribe_url}>"
    msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    msg["Auto-Submitted"] = "auto-generated"
    msg.set_content(text)
    msg.add_alternative(html, subtype="html")
    return bytes(msg)


def enqueue_email(
    conn: Conn,
    *,
    event: str,
    source: str,
    to: str,
    sender: str,
    subject: str,
    text: str,
    html: str,
    unsubscribe_url: str,
    now: float,
) -> str:
    """Queue one e-mail to `to`, due at once; returns its event id. Call inside the transaction of the
    change it announces (wake the dispatcher after the commit)."""
    event_id = new_event_id()
    body = build_message(
        event_id=event_id,
        sender=sender,
        to=to,
        subject=subject,
        text=text,
        html=html,
        unsubscribe_url=unsubscribe_url,
        now=now,
    )
    store.enqueue(
        conn,
        channel=EMAIL,
        event_id=event_id,
        event=event,
        source=source,
        url="mailto:" + to,
        host=MAIL_HOST,
        secret="",
        body=body,
        now=now,
    )
    return event_id


def recipient_of(d: Delivery) -> str:
    if not d.url.startswith("mailto:"):
        raise ValueError(f"not an e-mail target: {d.url!r}")
    return d.url.removeprefix("mailto:")


def host_failure(ok: bool, status: int | None) -> bool:
    """Does this attempt count against the relay? No answer, or 421 (service not available)."""
    return not ok and (status is None or status == 421)


class SmtpUrl(NamedTuple):
    implicit_tls: bool
    host: str
    port: int
    username: str | None
    password: str | None


def parse_smtp_url(url: str) -> SmtpUrl:
    """smtp://[user[:password]@]host[:port] (STARTTLS, default port 587) or smtps://... (TLS, 465)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ValueError("AGENTLEDGER_SMTP_URL must be smtp://[user:password@]host[:port] or smtps://...")
    implicit = parts.scheme == "smtps"
    user = urllib.parse.unquote(parts.username) if parts.username else None
    password = urllib.parse.unquote(parts.password) if parts.password else None
    return SmtpUrl(implicit, parts.hostname, parts.port or (465 if implicit else 587), user, password)


class SmtpChannel:
    name = EMAIL
    host_failure = staticmethod(host_failure)

    def __init__(self, url: str, *, sender: str = DEFAULT_FROM, ca_file: str | None = None, timeout: float = 30.0):
        self.target = parse_smtp_url(url)
        self.envelope_from = email.utils.parseaddr(sender)[1] or sender
        self.timeout = timeout
        self.tls = ssl.create_default_context(cafile=ca_file or None)

    async def start(self, concurrency: int) -> None:
        return None

    async def close(self) -> None:
        return None

    async def send(self, d: Delivery, now: float) -> Attempt:
        t = self.target
        try:
            to = recipient_of(d)
            errors, _reply = await aiosmtplib.send(
                d.body,
                sender=self.envelope_from,
                recipients=[to],
                hostname=t.host,
                port=t.port,
                username=t.username,
                password=t.password,
                use_tls=t.implicit_tls,
                start_tls=None if t.implicit_tls else True,
                tls_context=self.tls,
                timeout=self.timeout,
            )
        except aiosmtplib.SMTPRecipientsRefused as exc:
            code = exc.recipients[0].code if exc.recipients else None
            return Attempt(False, code, f"recipient refused: {exc}")
        except aiosmtplib.SMTPResponseException as exc:
            return Attempt(False, exc.code, f"SMTP {exc.code}: {exc.message}")
        except (aiosmtplib.SMTPException, OSError, ssl.SSLError, TimeoutError, ValueError) as exc:
            return Attempt(False, None, f"{type(exc).__name__}: {exc}")
        if errors:
            code = next(iter(errors.values())).code
            return Attempt(False, code, f"recipient refused: {errors}")
        return Attempt(True, 250, None)


class MailDirChannel:
    """No SMTP configured: each message is written to `<directory>/<event id>.eml`."""

    name = EMAIL
    host_failure = staticmethod(host_failure)

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    async def start(self, concurrency: int) -> None:
        return None  # the directory is made by the first message (a service that sends none leaves no trace)

    async def close(self) -> None:
        return None

    async def send(self, d: Delivery, now: float) -> Attempt:
        try:
            recipient_of(d)
            self.directory.mkdir(parents=True, exist_ok=True)
            path = self.directory / f"{d.event_id}.eml"
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(d.body)
            os.replace(tmp, path)  # a reader never sees half a message; a resend replaces it
        except (OSError, ValueError) as exc:
            return Attempt(False, None, f"{type(exc).__name__}: {exc}")
        return Attempt(True, 250, None)


def channel_for(smtp_url: str, *, sender: str, ca_file: str, data_dir: Path) -> SmtpChannel | MailDirChannel:
    """The e-mail channel configuration asks for: SMTP when a URL is set, else files under data_dir/mail."""
    if smtp_url:
        return SmtpChannel(smtp_url, sender=sender, ca_file=ca_file or None)
    return MailDirChannel(data_dir / "mail")
