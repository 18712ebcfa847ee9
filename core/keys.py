"""API keys: the format (`aglk_` + 32 lowercase hex) and the stored form (SHA-256 hex).

A key is shown once, when it is created; only its hash is stored, and a presented key is found by
its hash and compared in constant time (api.auth).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import Literal

KEY_PREFIX = "aglk_"
KEY_PATTERN = r"^aglk_[0-9a-f]{32}$"
KEY_RE = re.compile(KEY_PATTERN[1:-1])


def new_api_key() -> str:
    return KEY_PREFIX + secrets.token_hex(16)


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode("ascii")).hexdigest()


#: What a key may do (least privilege, for HTTP and MCP alike): read (GETs of private data), log
#: (records that move no money: decisions, memory, runs, reported earnings), spend (whatever moves or
#: commits value), admin (accounts, agents, providers, catalogue). A key without a scope list has all.
SCOPES: tuple[str, ...] = ("read", "log", "spend", "admin")


def parse_scopes(text: str) -> frozenset[str]:
    """A scope list (comma- or space-separated) as a set; ValueError naming an unknown scope."""
    found = frozenset(s for s in text.replace(",", " ").split() if s)
    unknown = sorted(found - set(SCOPES))
    if unknown:
        raise ValueError(f"unknown scope {unknown[0]!r}; scopes are {', '.join(SCOPES)}")
    if not found:
        raise ValueError("name at least one scope")
    return found


def scopes_text(scopes: frozenset[str]) -> str:
    """The stored form of a scope set: space-separated, in SCOPES order."""
    return " ".join(s for s in SCOPES if s in scopes)


#: What a key finds of something held in an account (Caller.reach).
Reach = Literal["reached", "absent", "account_key_required"]


@dataclass(frozen=True)
class Caller:
    """Who is calling: the key's hash and its scope, an account (every agent of it) or one agent;
    what it may do (`scopes`, None: everything) and how much it may move per UTC day (`daily_cap`,
    micro-USDC, None: no cap)."""

    key_hash: str
    account_id: str
    agent_id: str | None  # None: the key acts for every agent of the account
    scopes: frozenset[str] | None = None
    daily_cap: int | None = None
    #: The key's own MCP toolsets (comma-separated, api.mcp.toolsets); None: the compact default.
    mcp_toolsets: str | None = None

    def reach(self, account_id: str, holder_agent: str | None) -> Reach:
        """What this key finds of something of account `account_id` held by its agent `holder_agent`
        (an agent itself, or a resource made by or about that agent), or by the account as a whole
        (None: the account's agents and keys, what an account key made). The one rule of key scope:
        an account key reaches all of its account; an agent-scoped key only what its own agent holds:
        the account's own things need an account key ("account_key_required"), and a sibling agent's
        answer as if absent, as another account's do ("absent"), so a key cannot probe its siblings."""
        if account_id != self.account_id:
            return "absent"
        if self.agent_id is None or holder_agent == self.agent_id:
            return "reached"
        return "account_key_required" if holder_agent is None else "absent"

    def may_act_for(self, account_id: str, agent_uuid: str) -> bool:
        """Whether this key may act for the agent `agent_uuid` of account `account_id`."""
        return self.reach(account_id, agent_uuid) == "reached"

    def has_scope(self, scope: str) -> bool:
        return self.scopes is None or scope in self.scopes
