"""Log two decisions and verify them here: each chain hash recomputed as /methodology describes
(SHA-256 of agent_id:seq:prev_hash:payload_hash over the RFC 8785 entry), the second linked to the
first, each inclusion proof walked to the tree's root; a tampered copy must fail the same check."""

from __future__ import annotations

import hashlib
from typing import Any

from _scenario import RPC_URL, URL, check, run
from agentledger_sdk import AgentLedger
from agentledger_sdk.verify import decision_chain_hash, entry_problems, sha256_hex


def scenario() -> dict[str, Any]:
    with AgentLedger(URL) as al:
        reg = al.register("auditor", "content_seo")
        agent_uuid = reg.agent.id
        first = al.log_decision(
            agent_uuid, "routine", hashlib.sha256(b"approve refund 42").hexdigest(), "gpt-x", "2026-01"
        )
        second = al.log_decision(
            agent_uuid,
            "critical",
            hashlib.sha256(b"wire 10,000 USDC").hexdigest(),
            "gpt-x",
            "2026-01",
            evidence=[("pdf", hashlib.sha256(b"invoice.pdf").hexdigest())],
            correlation_ref="case-7",
        )
        v1 = al.verify_decision(first, rpc_url=RPC_URL)
        v2 = al.verify_decision(second, rpc_url=RPC_URL)
        for v in (v1, v2):
            check(v.ok, f"entry {v.audit_id}: {v.problems}")
        check((v1.seq, v1.prev_hash) == (1, "genesis"), "the first decision opens the agent's stream")
        check((v2.seq, v2.prev_hash) == (2, first.chain_hash), "the second links to the first's chain hash")
        # the formula itself, spelled out once more here
        payload_hash = sha256_hex(str(v2.raw["payload_canonical"]).encode())
        check(
            decision_chain_hash(agent_uuid, 2, first.chain_hash, payload_hash) == second.chain_hash,
            "chain_hash = SHA-256(agent_id:seq:prev_hash:payload_hash)",
        )
        tampered = {**v2.raw, "payload": {**v2.raw["payload"], "event_type": "routine"}}
        tampered["payload_canonical"] = str(v2.raw["payload_canonical"]).replace('"critical"', '"routine"')
        check(entry_problems(tampered), "a tampered entry fails the client-side check")
    return {"agent": agent_uuid, "entries": [v1.audit_id, v2.audit_id], "tree_size": v2.tree_size, "root": v2.root}


if __name__ == "__main__":
    run(scenario)
