"""The order state machine and the messages providers sign (rules only; storage is core.store.orders).

States and who may move an order between them. No endpoint writes a status: each call names an
action, the action is checked against this table, and the move is recorded (history, audit chain,
webhook) in one transaction.

    created      -> acknowledged (provider), failed (provider, operator, chain), disputed (chain)
    acknowledged -> in_progress (provider), failed (provider, operator, chain), disputed (chain)
    in_progress  -> completed (provider; chain after a crash), failed (provider, operator, chain), disputed (chain)
    completed    -> released (chain), failed (operator, chain), disputed (chain)
    failed       -> in_progress (provider, operator: recovery), failed -> disputed (chain)
    disputed     -> released (chain: resolved with a provider share), failed (chain: refunded in full)
    created, acknowledged, failed -> completed (chain: a release submitted by anyone, then released)
    released     -> (final)

"chain" moves are made only by the indexer's order follower from final PaymentGateway events:
JobReleased and DisputeResolved -> released, DisputeOpened -> disputed, JobReclaimed -> failed.
"""

from __future__ import annotations

STATES = ("created", "acknowledged", "in_progress", "completed", "released", "failed", "disputed")
ACTORS = ("provider", "operator", "chain", "service")

_ANY_FAIL = {"provider", "operator", "chain"}

TRANSITIONS: dict[tuple[str, str], frozenset[str]] = {
    ("created", "acknowledged"): frozenset({"provider"}),
    ("created", "failed"): frozenset(_ANY_FAIL),
    ("created", "disputed"): frozenset({"chain"}),
    # chain: the gateway releases on the provider's attestation whoever submits it, so a release
    # may come straight from created, acknowledged or failed; the order follows the chain.
    ("created", "completed"): frozenset({"chain"}),
    ("acknowledged", "completed"): frozenset({"chain"}),
    ("failed", "completed"): frozenset({"chain"}),
    ("acknowledged", "in_progress"): frozenset({"provider"}),
    ("acknowledged", "failed"): frozenset(_ANY_FAIL),
    ("acknowledged", "disputed"): frozenset({"chain"}),
    # chain: the release was mined but our record of the attestation was lost (a crash): the follower
    # records both moves from the final JobReleased event.
    ("in_progress", "completed"): frozenset({"provider", "chain"}),
    ("in_progress", "failed"): frozenset(_ANY_FAIL),
    ("in_progress", "disputed"): frozenset({"chain"}),
    ("completed", "released"): frozenset({"chain"}),
    ("completed", "failed"): frozenset({"operator", "chain"}),
    ("completed", "disputed"): frozenset({"chain"}),
    ("failed", "in_progress"): frozenset({"provider", "operator"}),
    ("failed", "disputed"): frozenset({"chain"}),
    ("disputed", "released"): frozenset({"chain"}),
    ("disputed", "failed"): frozenset({"chain"}),
}

#: Provider actions (no Bearer key: an EIP-191 signature of the provider's self wallet) -> target state.
PROVIDER_ACTIONS = {"acknowledge": "acknowledged", "start": "in_progress", "fail": "failed", "recover": "in_progress"}
#: Signed timestamps older or newer than this many seconds are refused.
SIGNATURE_WINDOW_SECONDS = 300


class InvalidTransition(ValueError):
    def __init__(self, from_state: str, to_state: str, actor: str) -> None:
        super().__init__(f"an order in state {from_state} cannot move to {to_state} (by {actor})")
        self.from_state = from_state
        self.to_state = to_state
        self.actor = actor


def check_transition(from_state: str, to_state: str, actor: str) -> None:
    """Raise InvalidTransition unless `actor` may move an order from `from_state` to `to_state`."""
    if actor not in TRANSITIONS.get((from_state, to_state), frozenset()):
        raise InvalidTransition(from_state, to_state, actor)


def provider_message(action: str, order_id: str, timestamp: int) -> str:
    """What a provider signs (EIP-191 personal_sign) for acknowledge, start, fail and recover."""
    return f"{action}:{order_id}:{timestamp}"


def deliverable_message(order_id: str, sha256_hex: str, timestamp: int) -> str:
    """What a provider signs to upload a deliverable: the SHA-256 of the exact bytes uploaded."""
    return f"deliver:{order_id}:{sha256_hex}:{timestamp}"


def completion_message(job_id: str, cid: str, timestamp: int) -> str:
    """The completion attestation: exactly PaymentGateway.attestationMessage(jobId, cid, timestamp)."""
    return f"complete:{job_id}:{cid}:{timestamp}"
