"""The checkout feature's rows of the operation table (/api/schema, MCP tools): the buyer's checkout
sessions and orders, providers and the catalogue, the provider's side of an order."""

from __future__ import annotations

from api.checkout import models, provider_orders, providers, sessions
from api.operation import Operation
from core.checkout import orders, rules

_SESSION_ERRORS = {
    401: ("session_key_mismatch",),
    404: ("session_not_found",),
    409: ("session_completed", "session_cancelled", "session_expired", "session_in_progress"),
}
_BASE = "/api/acp/checkout_sessions"

_SESSION_ROWS: list[Operation] = [
    Operation(
        "POST",
        _BASE,
        "createCheckoutSession",
        "Create a checkout session",
        models.SessionResponse,
        status=201,
        request=models.SessionCreateRequest,
        idempotent=True,
        errors={
            400: ("invalid_email", "invalid_webhook_url"),
            404: ("item_not_found",),
            422: ("multiple_providers", "provider_not_linked", "amount_too_large", "webhook_url_refused"),
        },
        tags=("checkout",),
        description="Amounts are integers of micro-USDC (currency usdc). With webhook_url, the 201 carries "
        "webhook_secret (HMAC key of the order webhooks) once: an Idempotency-Key replay of it omits the secret. "
        "Unpaid sessions expire after the configured TTL.",
        run=sessions.run_create_session,
        touches="key",
        scope="spend",
    ),
    Operation(
        "GET",
        _BASE + "/{session_id}",
        "getCheckoutSession",
        "Retrieve a checkout session",
        models.SessionResponse,
        errors={k: v for k, v in _SESSION_ERRORS.items() if k != 409},
        tags=("checkout",),
        run=sessions.run_get_session,
        touches="key",
    ),
    Operation(
        "POST",
        _BASE + "/{session_id}",
        "updateCheckoutSession",
        "Update line items or buyer of an incomplete session",
        models.SessionResponse,
        request=models.SessionUpdateRequest,
        idempotent=True,
        errors={
            **_SESSION_ERRORS,
            400: ("invalid_email", "empty_update"),
            404: ("session_not_found", "item_not_found"),
            422: ("multiple_providers", "provider_not_linked", "amount_too_large"),
        },
        tags=("checkout",),
        run=sessions.run_update_session,
        touches="key",
        scope="spend",
    ),
    Operation(
        "POST",
        _BASE + "/{session_id}/cancel",
        "cancelCheckoutSession",
        "Cancel a checkout session",
        models.SessionResponse,
        idempotent=True,
        errors={**_SESSION_ERRORS, 405: ("session_not_cancelable",), 409: ("session_in_progress",)},
        tags=("checkout",),
        run=sessions.run_cancel_session,
        touches="key",
        scope="spend",
        destructive=True,
    ),
    Operation(
        "POST",
        _BASE + "/{session_id}/complete",
        "completeCheckoutSession",
        "Fund the escrow job from the buyer's approved USDC and create the order",
        models.SessionResponse,
        request=models.SessionCompleteRequest,
        idempotent=True,
        errors={
            **_SESSION_ERRORS,
            400: (
                "missing_email",
                "invalid_email",
                "missing_address",
                "invalid_address",
                "unsupported_payment_handler",
                "missing_payment_data",
                "missing_payment_signature",
                "invalid_payment_signature",
            ),
            401: ("session_key_mismatch", "payment_signature_mismatch"),
            409: (*_SESSION_ERRORS[409], "session_changed", "provider_paused"),
            422: ("insufficient_allowance", "insufficient_balance"),
            502: ("funding_failed",),
            503: ("order_pending", "funding_unconfirmed", "chain_unavailable", "indexer_halted"),
        },
        tags=("checkout",),
        description=f"payment_data.handler_id must be {rules.PAYMENT_HANDLER_ID}; "
        "payment_data.instrument.credential.token is the buyer's 0x address, which must have approved the "
        "PaymentGateway for the session total; payment_data.instrument.credential.signature is that address's "
        "EIP-712 signature of the session's Funding consent (core.checkout.rules.checkout_typed_data; the session's "
        "payment handler config carries it as typed_data, with message.buyer to set to that address): "
        "Funding(bytes32 jobId,address buyer,uint256 providerTokenId,uint256 amount,uint64 deadline), domain "
        f"{{name: {rules.FUNDING_DOMAIN_NAME!r}, version: {rules.FUNDING_DOMAIN_VERSION!r}, chainId, "
        "verifyingContract: the gateway}",
        run=sessions.run_complete_session,
        touches="key",
        scope="spend",
        quote=sessions.quote_complete,
        open_world=True,
    ),
    Operation(
        "GET",
        "/api/acp/orders/{order_id}",
        "getOrder",
        "An order: public fields; line items and totals for any key; buyer details for the funding key",
        models.OrderResponse,
        auth="optional",
        errors={404: ("order_not_found",)},
        tags=("checkout",),
        run=sessions.run_get_order,
        touches="key",
        resource="agentledger://orders/{order_id}",
        links={"deliverable_cid": "agentledger://ipfs/{deliverable_cid}"},
    ),
]


_PROVIDER_ROWS: list[Operation] = [
    Operation(
        "POST",
        "/api/acp/providers",
        "linkProvider",
        "Link an agent as a provider (mints its agent NFT)",
        models.ProviderResponse,
        status=201,
        request=models.ProviderLinkRequest,
        idempotent=True,
        errors={
            401: ("timestamp_out_of_window", "signature_mismatch"),
            404: ("agent_not_found", "unknown_referrer"),
            409: ("provider_already_linked", "provider_link_in_progress", "self_wallet_taken"),
            502: ("mint_failed", "chain_error"),
            503: ("chain_unavailable",),
        },
        tags=("checkout",),
        description="The self wallet signs (EIP-191) 'agentledger provider link\\nchain: <id>\\nagent: <agl_ id>\\n"
        "self_wallet: <address>\\nowner: <address>\\ntimestamp: <unix s>' (EIP-55 addresses, +-5 min window).",
        toolset="provider",
        run=providers.run_link_provider,
        touches="agent",
        scope="admin",
        open_world=True,
    ),
    Operation(
        "GET",
        "/api/acp/providers/{agent_id}",
        "getProvider",
        "A linked provider (public)",
        models.ProviderResponse,
        auth="none",
        errors={404: ("provider_not_found",)},
        tags=("checkout",),
        toolset="provider",
        run=providers.run_get_provider,
        resource="agentledger://providers/{agent_id}",
    ),
    Operation(
        "POST",
        "/api/acp/providers/{agent_id}/webhook",
        "setProviderWebhook",
        "Register the provider's webhook (news of its orders)",
        models.ProviderWebhookResponse,
        request=models.ProviderWebhookRequest,
        errors={
            400: ("invalid_webhook_url",),
            403: ("provider_not_linked",),
            404: ("agent_not_found",),
        },
        tags=("checkout",),
        toolset="account",
        run=providers.run_set_provider_webhook,
        touches="agent",
        scope="admin",
        destructive=True,
        description="Key of the agent or its account. The provider is sent `order.created` (the order id, "
        "service_job_id, amount in micro-USDC, deadline, buyer_address, line_items) when an order of its is "
        "created, then `job.state_changed` on each move, signed as every webhook (X-Service-Signature and the "
        "Standard Webhooks headers) with `webhook_secret`, shown once in this answer; each call rotates it. "
        "http(s) only; private, loopback and link-local targets are refused (also after DNS resolution).",
        path_params={"agent_id": "the provider agent's agl_ wallet id"},
    ),
    Operation(
        "DELETE",
        "/api/acp/providers/{agent_id}/webhook",
        "deleteProviderWebhook",
        "Stop the provider's order webhooks",
        models.ProviderWebhookResponse,
        errors={403: ("provider_not_linked",), 404: ("agent_not_found",)},
        tags=("checkout",),
        path_params={"agent_id": "the provider agent's agl_ wallet id"},
        toolset="account",
        run=providers.run_delete_provider_webhook,
        touches="agent",
        scope="admin",
        destructive=True,
    ),
    Operation(
        "GET",
        "/api/acp/providers/{agent_id}/orders",
        "listProviderOrders",
        "The provider's orders, newest first",
        models.ProviderOrderList,
        query=models.ProviderOrdersQuery,
        errors={403: ("provider_not_linked",), 404: ("agent_not_found",)},
        tags=("checkout",),
        toolset="provider",
        run=providers.run_list_provider_orders,
        touches="agent",
        description="Key of the agent or its account. Each order: id, status, service_job_id, settlement_tx_hash, "
        "amount (micro-USDC), deadline, buyer_address, deliverable_cid, line_items. Paginated: pass next_cursor "
        "as cursor while has_more.",
        path_params={"agent_id": "the provider agent's agl_ wallet id"},
    ),
    Operation(
        "POST",
        "/api/acp/items",
        "createItem",
        "Publish a catalogue item",
        models.ItemResponse,
        status=201,
        request=models.ItemCreateRequest,
        idempotent=True,
        errors={
            404: ("agent_not_found",),
            403: ("provider_not_linked",),
            409: ("item_exists",),
            422: ("missing_agent_id",),
        },
        tags=("checkout",),
        description="Tiers: standard 48 h (default 250 USDC), rush 24 h (375 USDC), deep 72 h (500 USDC); "
        "`price` (USDC) overrides the tier's default.",
        toolset="provider",
        run=providers.run_create_item,
        touches="agent",
        scope="admin",
    ),
    Operation(
        "GET",
        "/api/acp/items",
        "listItems",
        "List catalogue items (public)",
        models.ItemListResponse,
        query=models.ItemsQuery,
        auth="none",
        tags=("checkout",),
        run=providers.run_list_items,
    ),
    Operation(
        "GET",
        "/api/acp/items/{item_id}",
        "getItem",
        "A catalogue item (public)",
        models.ItemResponse,
        auth="none",
        errors={404: ("item_not_found",)},
        tags=("checkout",),
        run=providers.run_get_item,
        resource="agentledger://items/{item_id}",
    ),
]


_SIGNED_ERRORS = {
    401: ("signature_expired", "invalid_signature"),
    404: ("order_not_found",),
    409: ("invalid_transition", "signature_replayed", "provider_not_linked", "escrow_closed"),
}


def _action_description(action: str) -> str:
    text = f"Signed by the provider's self wallet (EIP-191) over '{action}:{{order_id}}:{{timestamp}}'"
    if action == "fail":
        return (
            f"{text} or, with a reason (1-{orders.MAX_REASON_CHARS} printable characters, published in the history"
            " and the audit log), over 'fail:{order_id}:{timestamp}:{reason}'."
        )
    if action == "start":
        return f"{text}. An order may be started straight from created (acknowledge is optional)."
    return text + "."


_ORDER_ROWS: list[Operation] = [
    *(
        Operation(
            "POST",
            f"/api/acp/orders/{{order_id}}/{action}",
            f"{action}Order",
            f"Provider: {action} an order",
            models.OrderMove,
            request=models.FailRequest if action == "fail" else models.Signed,
            auth="none",
            errors={**_SIGNED_ERRORS, 422: ("invalid_reason",)} if action == "fail" else _SIGNED_ERRORS,
            tags=("orders",),
            description=_action_description(action),
            run=provider_orders.ACTION_RUNS[action],
            toolset="provider",
            destructive=action == "fail",
        )
        for action in orders.PROVIDER_ACTIONS
    ),
    Operation(
        "POST",
        "/api/acp/orders/{order_id}/deliverables",
        "uploadDeliverable",
        "Provider: upload the deliverable",
        models.DeliverableResponse,
        status=201,
        request=models.DeliverableContent,
        request_forms={"multipart/form-data": models.DeliverableForm},
        auth="none",
        errors={
            **_SIGNED_ERRORS,
            400: ("invalid_content", "digest_mismatch", "invalid_request"),
            401: (*_SIGNED_ERRORS[401], "missing_signature"),
            408: ("upload_timeout",),
            409: (*_SIGNED_ERRORS[409], "deliverable_quota", "upload_in_progress"),
            413: ("payload_too_large",),
            415: ("unsupported_media_type",),
            429: ("upload_slots_busy",),
        },
        tags=("orders",),
        toolset="provider",
        run=provider_orders.run_upload_deliverable,
        handler=provider_orders.upload_deliverable,
        links={"cid": "agentledger://ipfs/{cid}"},
        description=f"multipart/form-data (one `file` part) or JSON {{content}}, signed in the headers "
        f"{models.TIMESTAMP_HEADER} (unix s), {models.DIGEST_HEADER} (hex SHA-256 of the exact bytes: the file "
        f"part, or the content's RFC 8785 JSON) and {models.SIGNATURE_HEADER} (EIP-191 over "
        "'deliver:{order_id}:{sha256}:{timestamp}'), all checked before the body is read. One upload per order "
        "and two per provider are read at a time (409 / 429 past them); the body must arrive within the read "
        "deadline (408) and hash to the signed SHA-256 (400 digest_mismatch). Answers the bytes' CID (Kubo's "
        "`ipfs add --cid-version=1`), served at /ipfs/{cid}. At most 20 uploads per order; the last one is the "
        "order's deliverable. As an MCP tool (no headers): {content, timestamp, signature}, signed alike.",
    ),
    Operation(
        "POST",
        "/api/acp/orders/{order_id}/complete",
        "completeOrder",
        "Provider: attest completion and release the escrow",
        models.CompleteResponse,
        request=models.CompleteAttestation,
        auth="none",
        errors={
            **_SIGNED_ERRORS,
            400: ("invalid_cid",),
            409: (*_SIGNED_ERRORS[409], "deliverable_mismatch", "release_refused", "already_released"),
            422: ("release_refused",),
            503: ("chain_unavailable", "internal_step_failed", "indexer_halted"),
        },
        tags=("orders",),
        toolset="provider",
        run=provider_orders.run_complete,
        open_world=True,
        description="Signed over 'complete:{jobId}:{cid}:{timestamp}' (the gateway's attestationMessage); sends the "
        "gateway release and answers its transaction. The order becomes released when the release is final on-chain.",
    ),
]


OPERATIONS: tuple[Operation, ...] = (*_SESSION_ROWS, *_PROVIDER_ROWS, *_ORDER_ROWS)
