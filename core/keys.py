"""API keys: the format (`aglk_` + 32 lowercase hex) and the stored form (SHA-256 hex).

A key is shown once, when it is created; only its hash is stored, and a presented key is found by
its hash and compared in constant time (api.auth).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

KEY_PREFIX = "aglk_"
KEY_PATTERN = r"^aglk_[0-9a-f]{32}$"
KEY_RE = re.compile(KEY_PATTERN[1:-1])


def new_api_key() -> str:
    return KEY_PREFIX + secrets.token_hex(16)


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class Caller:
    """Who is calling: the key's hash and its scope, an account (every agent of it) or one agent."""

    key_hash: str
    account_id: str
    agent_id: str | None  # None: the key acts for every agent of the account

    def may_act_for(self, account_id: str, agent_uuid: str) -> bool:
        """Whether this key may act for the agent `agent_uuid` of account `account_id`."""
        return account_id == self.account_id and (self.agent_id is None or self.agent_id == agent_uuid)
