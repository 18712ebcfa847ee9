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
import time
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
    if "aglk_" not in text and "agls_" not in text and "earer" not in text and "EARER" not in text:
        return text  # the common case, at the cost of four substring scans (every access line pays it)
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


class JsonFormatter(logging.Formatter):
    """{"ts", "level", "logger", "message", ...extra fields, "exc"?} on one line."""

    def __init__(self) -> None:
        super().__init__()
        self._second = -1
        self._stamp = ""

    def _iso(self, t: float) -> str:
        """ISO 8601 UTC with milliseconds; the part up to the second is formatted once a second."""
        second = int(t)
        if second != self._second:
            self._second, self._stamp = second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self._stamp}.{int(t * 1000) % 1000:03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": self._iso(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and key[0] != "_":
                out[key] = redact(value) if isinstance(value, str) else value
        if record.exc_info:
            out["exc"] = redact(self.formatException(record.exc_info))
        return _ENCODER.encode(out)


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
    # Neither format shows the caller's file and line, nor thread or process names: skip gathering
    # them on every record (the logging HOWTO's "Optimization"; an access line is logged per request).
    logging._srcfile = None  # type: ignore[attr-defined]
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    return handler
