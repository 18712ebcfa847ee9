"""What an agent reads without spending a tool call: its own balance and recent ledger as MCP
resources, and three prompts for the common loops (earn and report, hire a provider, log a
high-stakes decision).

Resources are per agent the key reaches (`agentledger://agents/{agentId}/balance` and `/ledger`):
listed for the caller's agents (an agent key: its own; an account key: its account's first
LISTED_AGENTS), readable with scope `read`; another account's agent answers not found, as over HTTP
(api.auth.agent_for). The balance is GET /api/agents/balance's answer, run by its row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as t
from mcp import UriTemplate

from api.auth import agent_for
from api.http import encode, iso, usdc
from core.errors import ServiceError
from core.keys import Caller
from core.store import dashboard as ledger_store
from core.store import wallets as agent_store
from core.store.types import Conn
from core.store.wallets import AgentRow

#: The row whose answer the balance resource is.
BALANCE_OPERATION = "getBalance"
BALANCE_TEMPLATE = "agentledger://agents/{agentId}/balance"
LEDGER_TEMPLATE = "agentledger://agents/{agentId}/ledger"
#: The ledger resource's rows (newest first) and the agents listed for an account key.
LEDGER_ROWS, LISTED_AGENTS = 20, 10

TEMPLATES = (
    t.ResourceTemplate(
        name="agent_balance",
        title="An agent's balance",
        uri_template=BALANCE_TEMPLATE,
        description="The agent's balance and totals (get_balance's answer). Scope read.",
        mime_type="application/json",
    ),
    t.ResourceTemplate(
        name="agent_ledger",
        title="An agent's recent ledger",
        uri_template=LEDGER_TEMPLATE,
        description=f"The agent's last {LEDGER_ROWS} ledger rows, newest first. Scope read.",
        mime_type="application/json",
    ),
)


def _uri(template: str, wallet: str) -> str:
    return template.replace("{agentId}", wallet)


def caller_agents(db: Conn, caller: Caller) -> list[AgentRow]:
    """The agents whose resources are listed to `caller`."""
    if caller.agent_id is not None:
        agent = agent_store.agent_by_uuid(db, caller.agent_id)
        return [] if agent is None else [agent]
    return [AgentRow(*row) for row in ledger_store.agents_of_account(db, caller.account_id, LISTED_AGENTS)]


def resources_of(agents: list[AgentRow]) -> list[t.Resource]:
    out = []
    for agent in agents:
        for template, what in ((BALANCE_TEMPLATE, "balance"), (LEDGER_TEMPLATE, "recent ledger")):
            out.append(
                t.Resource(
                    name=f"{agent.name} {what}",
                    uri=_uri(template, agent.wallet),
                    description=f"{agent.wallet}'s {what}",
                    mime_type="application/json",
                )
            )
    return out


def match(uri: str) -> tuple[str, str] | None:
    """("balance" | "ledger", the wallet) of an agent resource URI, else None."""
    for kind, template in (("balance", BALANCE_TEMPLATE), ("ledger", LEDGER_TEMPLATE)):
        found = UriTemplate.parse(template).match(uri)
        if found is not None:
            return kind, str(found["agentId"])
    return None


def ledger_json(db: Conn, caller: Caller, wallet: str) -> str:
    """The ledger resource: the agent's last LEDGER_ROWS rows (404 for an agent the key does not reach)."""
    agent = agent_for(db, caller, wallet)
    rows = ledger_store.ledger_rows(db, [agent.uuid], limit=LEDGER_ROWS)
    entries = [
        {
            "id": r.id,
            "kind": r.kind,
            "amount": usdc(r.amount),
            "balanceAfter": usdc(r.balance_after),
            "source": r.source,
            "createdAt": iso(r.created_at),
        }
        for r in rows
    ]
    return encode({"agentId": agent.wallet, "entries": entries})


def require_read(caller: Caller | None) -> Caller:
    if caller is None:
        raise ServiceError(401, "missing_api_key", "an agent's resources need an API key", param="Authorization")
    if not caller.has_scope("read"):
        raise ServiceError(403, "insufficient_scope", "this API key lacks the 'read' scope", param="Authorization")
    return caller


# ---- prompts -----------------------------------------------------------------------------------


def _arg(name: str, description: str, required: bool = True) -> t.PromptArgument:
    return t.PromptArgument(name=name, description=description, required=required)


#: name -> (the prompt as listed, its text with {argument} placeholders)
PROMPTS: dict[str, tuple[t.Prompt, str]] = {
    "earn_and_report": (
        t.Prompt(
            name="earn_and_report",
            title="Earn and report",
            description="Record an earning for an agent and report its balance.",
            arguments=[
                _arg("agentId", "the agent's wallet (agl_...)"),
                _arg("amount", "USDC earned, e.g. 12.5"),
                _arg("source", "where it came from"),
            ],
        ),
        "Call earn with agentId {agentId}, amount {amount} and source {source!r}. Then call get_balance for "
        "{agentId} and report the new balance, what the earning credited (net) and the toll, in USDC.",
    ),
    "hire_a_provider": (
        t.Prompt(
            name="hire_a_provider",
            title="Hire a provider",
            description="Find the best provider for a service and hire it within a budget.",
            arguments=[
                _arg("serviceType", "the service wanted, e.g. data_research"),
                _arg("input", "the job's input (a JSON object)"),
                _arg("maxPrice", "the most to pay in USDC"),
                _arg("agentId", "the paying agent's wallet (agl_...)"),
            ],
        ),
        "Call hire_registry with serviceType {serviceType} and maxPrice {maxPrice}; pick the best-scored healthy "
        "provider. Call quote_hire_agent with callerWallet {agentId}, providerWallet that provider's wallet, "
        "serviceType {serviceType}, input {input} and maxPrice {maxPrice}; check the quoted amount and "
        "recipient, then call hire_agent with the quote_id. Report the outcome, the cost and the output's link.",
    ),
    "log_high_stakes_decision": (
        t.Prompt(
            name="log_high_stakes_decision",
            title="Log a high-stakes decision",
            description="Log a high-stakes decision (hashes only) to the agent's tamper-evident log.",
            arguments=[
                _arg("agentId", "the agent's wallet (agl_...)"),
                _arg("decision", "what was decided and why (hashed locally, never sent)"),
                _arg("modelId", "the model that decided"),
                _arg("modelVersion", "its version"),
            ],
        ),
        "Compute the SHA-256 (64 lowercase hex) of this decision text: {decision!r}; do not send the text. "
        "Call get_identity for {agentId} to get its uuid, then log_decision with agent_uuid that uuid, "
        "event_type high_stakes, content_hash the digest, model_id {modelId} and model_version "
        "{modelVersion}. Report the audit_id and verification_url.",
    ),
}


def prompt_text(name: str, arguments: Mapping[str, Any] | None) -> tuple[t.Prompt, str]:
    """A prompt filled in with its arguments; ServiceError 400 for an unknown prompt or a missing argument."""
    found = PROMPTS.get(name)
    if found is None:
        raise ServiceError(400, "unknown_prompt", f"no prompt {name!r}: one of {', '.join(PROMPTS)}", param="name")
    prompt, text = found
    given = {k: str(v) for k, v in (arguments or {}).items()}
    for argument in prompt.arguments or ():
        if argument.required and not given.get(argument.name):
            raise ServiceError(400, "missing_field", f"{argument.name}: required", param=argument.name)
    return prompt, text.format(**{a.name: given.get(a.name, "") for a in prompt.arguments or ()})
