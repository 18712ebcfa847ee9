"""The rules of agent-to-agent hire that need no database: limits, identifiers, the escrow caller's
signed message, the canonical bytes of inputs and outputs, and the error codes of a failed run.

Inputs and outputs are hashed over their RFC 8785 (JCS) canonical JSON, so any JCS library
reproduces the digest: numbers are IEEE doubles as in JavaScript (a JSON number with a fraction
is read as a decimal and hashed as the nearest double; integers must stay within +-2^53).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
from decimal import Decimal
from typing import Any

import rfc8785

from core import ipfs
from core.errors import ServiceError
from core.jsontext import MAX_JSON_DEPTH, too_deep

#: A service type: a short token (`keyword_research`, `data_research`).
SERVICE_TYPE_RE = re.compile(r"[a-z0-9_]{1,40}")
#: The maximum response time a service may publish (the runner's timeout), seconds. A hire is one
#: HTTP request that waits for the output, so it stays well under the Idempotency-Key's 5 minutes.
MIN_SLA_SECONDS = 1
MAX_SLA_SECONDS = 240
DEFAULT_SLA_SECONDS = 30
#: The largest output a provider may answer (bytes read; past it the run fails, nothing is charged).
MAX_OUTPUT_BYTES = 1024 * 1024
#: The largest input (its canonical JSON) a caller may send.
MAX_INPUT_BYTES = 256 * 1024
#: JSON Schemas a service publishes: at most this many bytes each (as compact JSON).
MAX_SCHEMA_BYTES = 64 * 1024
#: An escrow job is run only with at least this much time (beyond the service's SLA) left before it
#: expires on-chain: time for the release to be mined.
RELEASE_MARGIN_SECONDS = 600

STANDARD = "standard"
ESCROW = "escrow"
WEBHOOK_EVENT = "hire.job_state_changed"


#: A hire job's id: a standard job's (new_job_id), or an escrow job's bytes32 (any case; stored lowercase).
JOB_ID_PATTERN = r"^(hire_[0-9a-f]{24}|0x[0-9a-fA-F]{64})$"


def new_job_id() -> str:
    return "hire_" + secrets.token_hex(12)


# ---- canonical JSON and digests ------------------------------------------------------------------


def _doubles(value: Any) -> Any:
    """Decimals (JSON numbers with a fraction, as the API reads them) as floats, for JCS."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {k: _doubles(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_doubles(v) for v in value]
    return value


def canonical(value: Any) -> bytes:
    """RFC 8785 bytes of a JSON value; ValueError when it has none (NaN, an integer past 2^53)."""
    try:
        return rfc8785.dumps(_doubles(value))
    except (rfc8785.CanonicalizationError, TypeError, OverflowError) as exc:
        raise ValueError(str(exc)) from exc


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def output_digests(data: bytes) -> tuple[str, str]:
    """(SHA-256 hex, CID) of an output's bytes, the CID as `ipfs add --cid-version=1` gives it. One
    chunk (up to 256 KiB) is a single raw leaf: CIDv1 raw sha2-256 in base32, built here directly
    (core.ipfs's general builder costs milliseconds a call through the multiformats library)."""
    digest = hashlib.sha256(data).digest()
    if len(data) > ipfs.CHUNK_SIZE:
        return digest.hex(), ipfs.cid_of(data)
    raw = bytes([0x01, 0x55, 0x12, 0x20]) + digest  # CIDv1, raw codec, sha2-256, 32 bytes
    return digest.hex(), "b" + base64.b32encode(raw).decode().lower().rstrip("=")


def input_digest(value: Any) -> tuple[bytes, str]:
    """(canonical bytes, SHA-256 hex) of a job's input; 400 when it cannot be hashed or is too large."""
    try:
        data = canonical(value)
    except ValueError as exc:
        raise ServiceError(422, "invalid_input", f"input has no canonical JSON form: {exc}", param="input") from exc
    if len(data) > MAX_INPUT_BYTES:
        raise ServiceError(
            413, "input_too_large", f"input is larger than {MAX_INPUT_BYTES} bytes as canonical JSON", param="input"
        )
    return data, sha256_hex(data)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _integral(value: Any) -> Any:
    """Whole floats as ints (A2A data parts carry every number as a double: 3 arrives as 3.0)."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def parse_output(raw: bytes) -> Any:
    """A provider's answer bytes as a JSON value; ValueError when they are not JSON (or nest deeper
    than the API's limit, checked before parsing)."""
    if too_deep(raw):
        raise ValueError(f"the answer nests deeper than {MAX_JSON_DEPTH} levels")
    text = raw.decode("utf-8")
    return json.loads(text, parse_constant=_no_constant)


def output_value(value: Any) -> Any:
    return _integral(value)


# ---- the escrow caller's signature ---------------------------------------------------------------


def escrow_message(*, chain_id: int, escrow: str, job_id: str, input_sha256: str, timestamp: int) -> str:
    """What the on-chain caller signs (EIP-191 personal_sign) to run an escrow job or read its output:
    lines joined by "\\n", no trailing newline; `escrow` EIP-55, `job_id` 0x + 64 lowercase hex,
    `input_sha256` the SHA-256 hex of the input's RFC 8785 JSON."""
    return "\n".join(
        [
            "agentledger escrow hire",
            f"chain: {chain_id}",
            f"escrow: {escrow}",
            f"job: {job_id}",
            f"input: {input_sha256}",
            f"timestamp: {timestamp}",
        ]
    )


# ---- how a run fails -----------------------------------------------------------------------------

#: Error code -> (HTTP status of a standard hire's answer, whether it counts against the provider's health).
FAILURES: dict[str, tuple[int, bool]] = {
    "provider_timeout": (504, True),
    "provider_unreachable": (502, True),
    "provider_error": (502, True),
    "provider_invalid_output": (502, True),
    "provider_response_too_large": (502, True),
    "output_schema_mismatch": (502, True),
    "provider_refused_target": (502, True),
    "hire_interrupted": (503, False),
    "provider_cannot_be_paid": (409, False),
}


def failure_status(code: str) -> int:
    return FAILURES.get(code, (502, True))[0]


def provider_fault(code: str) -> bool:
    return FAILURES.get(code, (502, True))[1]
