"""Logging for the service's processes: plain text (the default) or one JSON object per line
(AGENTLEDGER_LOG_FORMAT=json), and secrets kept out of both.

Every line goes through `redact`, whatever logged it: API keys (`aglk_` + 32 hex), dashboard session
tokens (`agls_` + 43 characters) and bearer tokens come out as `[redacted]`. Nothing in the service
logs a key, a cookie, a request body or a query string on purpose; this is the net under that rule.
A request's access line (api.metrics) carries its method, route template, status, latency and
request id, never its path parameters, query or headers.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

FORMATS = ("text", "json")

_SECRETS = (
    (re.compile(r"aglk_[0-9a-fA-F]{32}"), "aglk_[redacted]"),
    (re.compile(r"agls_[A-Za-z0-9_-]{20,}"), "agls_[redacted]"),
    (re.compile(r"(?i)\b(bearer\s+)[^\s\"',;]+"), r"\1[redacted]"),
)
#: Attributes every LogRecord has; anything else on a record came from `extra=` and is a field.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


def redact(text: str) -> str:
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


class JsonFormatter(logging.Formatter):
    """{"ts", "level", "logger", "message", ...extra fields, "exc"?} on one line."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = redact(value) if isinstance(value, str) else value
        if record.exc_info:
            out["exc"] = redact(self.formatException(record.exc_info))
        return json.dumps(out, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """The plain format, redacted."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def configure(fmt: str = "text", *, level: int = logging.INFO, stream: TextIO | None = None) -> logging.Handler:
    """Send the root logger's records to `stream` (stderr) in `fmt`; replaces earlier handlers."""
    if fmt not in FORMATS:
        raise ValueError(f"AGENTLEDGER_LOG_FORMAT must be one of {', '.join(FORMATS)}, not {fmt!r}")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    return handler
