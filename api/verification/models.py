"""The verification pages' query and response models."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, RootModel


class FormatQuery(BaseModel):
    """?format=json or ?format=html picks the form; without it, Accept does (HTML unless it names
    application/json and not text/html)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    format: Literal["json", "html"] | None = None


class HtmlPage(RootModel[str]):
    """A page for people (text/html)."""


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class Verification(_Loose):
    """The entry, its chain inputs, shell commands, inclusion proof and anchor (see /methodology)."""

    audit_id: int
    stream: str
    seq: int
    chain_hash: str
    prev_hash: str
    inclusion: dict[str, Any]
    anchor: dict[str, Any] | None


class Methodology(_Loose):
    """Every formula: both chain rules, RFC 8785 canonicalisation, the Merkle leaf and tree."""


class DecisionLoggingDiscovery(_Loose):
    """Endpoint, tiers, rate limit, verification, evidence options, webhook behaviour."""

    endpoint: str
    tiers: dict[str, str]
    methodology: str
