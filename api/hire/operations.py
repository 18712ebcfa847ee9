"""The hire API's rows of the operation table (/api/schema, MCP tools)."""

from __future__ import annotations

from api.hire import models, routes
from api.operation import Operation
from core.hire import rules

_TAGS = ("hire",)

_FAILURES = {
    502: (
        "provider_unreachable",
        "provider_error",
        "provider_invalid_output",
        "provider_response_too_large",
        "output_schema_mismatch",
        "provider_refused_target",
    ),
    503: ("hire_interrupted",),
    504: ("provider_timeout",),
}

OPERATIONS: list[Operation] = [
    Operation(
        "POST",
        "/api/a2a/services",
        "publishHireService",
        "Publish (or replace) a service this provider agent offers for hire",
        models.ServiceResponse,
        request=models.ServicePublishRequest,
        idempotent=True,
        errors={
            422: ("invalid_schema", "invalid_url", "missing_agent_id", "invalid_service_type", "invalid_sla"),
            403: ("provider_not_linked",),
            404: ("agent_not_found",),
            413: ("schema_too_large",),
        },
        tags=_TAGS,
        description="`created`: a new service, or the agent's service of that type replaced. The runner's "
        "requests are signed with Standard Webhooks headers; `signingSecret` (whsec_ form) is shown once, "
        "when the service is created or `rotateSecret` is true. An escrow hire locks the on-chain "
        "AgentEscrow.priceOf: set it equal to `price` (`escrow.available` says whether it is).",
        run=routes.run_publish_service,
        touches="agent",
        scope="admin",
        destructive=True,  # replaces the agent's service of that type
    ),
    Operation(
        "GET",
        "/api/a2a/services",
        "listHireServices",
        "The provider agent's own services, with health and escrow availability",
        models.ServiceListResponse,
        query=models.ServicesQuery,
        errors={422: ("missing_agent_id",), 404: ("agent_not_found",)},
        tags=_TAGS,
        run=routes.run_list_services,
        touches="agent",
        scope="read",
    ),
    Operation(
        "DELETE",
        "/api/a2a/services/{serviceType}",
        "withdrawHireService",
        "Withdraw one of the provider agent's services (no longer hirable)",
        models.ServiceResponse,
        query=models.ServicesQuery,
        errors={422: ("missing_agent_id",), 404: ("agent_not_found", "service_not_found")},
        tags=_TAGS,
        path_params={"serviceType": "the service type to withdraw"},
        run=routes.run_withdraw_service,
        touches="agent",
        scope="admin",
        destructive=True,
    ),
    Operation(
        "POST",
        "/api/a2a/hire",
        "hireAgent",
        "Standard hire: run a job at a provider, charged to the caller agent's balance",
        models.HireResponse,
        request=models.HireRequest,
        idempotent=True,
        errors={
            404: ("agent_not_found", "service_not_found", "no_provider_available"),
            409: ("provider_paused", "provider_cannot_be_paid", "agent_paused"),
            413: ("input_too_large",),
            422: (
                "insufficient_balance",
                "price_above_max",
                "self_hire",
                "input_schema_mismatch",
                "invalid_input",
                "invalid_webhook_url",
                "missing_field",
                "invalid_field",
            ),
            **_FAILURES,
        },
        tags=_TAGS,
        description="The price is reserved on the caller's balance, the provider is called within its SLA, then "
        "in one transaction the provider is paid through the earn split and the caller charged. A failed run "
        "(5xx with the error shape plus jobId, amountCharged 0) charges nothing. The same Idempotency-Key runs the "
        "job once and replays its answer, failures included. A caller listed for sale (paused) hires nobody "
        "(409 agent_paused); a paused provider is never chosen (409 provider_paused when named).",
        mcp_default=True,
        mcp_output_schema=True,
        run=routes.run_hire,
        touches="agent",
        scope="spend",
        quote=routes.quote_hire,
        content_fields=("output",),  # the provider's output: an MCP result links to it (third-party input)
        open_world=True,  # calls the provider's endpoint
    ),
    Operation(
        "POST",
        "/api/a2a/escrow",
        "escrowHire",
        "Escrow hire: run the job locked by createJob; release on success, refund on failure",
        models.EscrowResponse,
        request=models.EscrowRequest,
        auth="optional",
        idempotent=True,  # with a key: the same Idempotency-Key replays the first answer
        errors={
            401: ("signature_expired", "signature_mismatch", "invalid_signature"),
            404: ("service_not_found", "escrow_not_deployed"),
            409: ("signature_replayed", "job_in_progress", "transaction_not_found", "escrow_not_locked"),
            413: ("input_too_large",),
            422: (
                "transaction_failed",
                "job_not_in_transaction",
                "provider_mismatch",
                "input_schema_mismatch",
                "invalid_input",
                "invalid_webhook_url",
                "missing_field",
                "invalid_field",
            ),
            503: ("chain_unavailable",),
        },
        tags=_TAGS,
        description="No API key: `signature` is the on-chain caller's EIP-191 signature of the lines "
        "'agentledger escrow hire', 'chain: <id>', 'escrow: <AgentEscrow address, EIP-55>', 'job: <escrowJobId, "
        "lowercase>', 'input: <SHA-256 hex of the input's RFC 8785 JSON>', 'timestamp: <unix s>' joined by "
        "'\\n' (+-300 s, used once). A job runs at most once; a later POST by its caller returns the stored "
        "result. `settlement` is pending while a release or refund is retried. No API key is needed (the "
        "signature authenticates); a key given needs scope spend, and its daily cap counts the locked amount.",
        mcp_output_schema=True,
        run=routes.run_escrow,
        touches="nothing",
        scope="spend",
        quote=routes.quote_escrow,
        content_fields=("output",),  # the provider's output: an MCP result links to it (third-party input)
        open_world=True,  # the chain and the provider's endpoint
    ),
    Operation(
        "GET",
        "/api/a2a/escrow",
        "escrowStatus",
        "An escrow job's on-chain status (AgentEscrow.jobStatus)",
        models.EscrowStatusResponse,
        query=models.EscrowQuery,
        auth="none",
        errors={404: ("escrow_not_deployed",), 503: ("chain_unavailable",)},
        tags=_TAGS,
        run=routes.run_escrow_status,
        scope="read",
        open_world=True,  # read from the chain
    ),
    Operation(
        "GET",
        "/api/a2a/hire/{jobId}/audit",
        "hireJobAudit",
        "A hire job's audit stream: every move, in order, with its chain and Merkle hashes (public)",
        models.HireAuditResponse,
        auth="none",
        errors={400: ("invalid_job_id",), 404: ("job_not_found",)},
        tags=_TAGS,
        description="Standard and escrow jobs alike (the stream hire:<jobId>). Check it without trusting this "
        "service: each chainHash is SHA-256(prevHash || canonicalPayload), each entry a leaf of the log anchored "
        "on-chain (proofUrl). Public, as every entry already is at /verify/{auditId}.",
        path_params={"jobId": "the job's id: jobId of a hire's answer (hire_...), or an escrow job's 0x id"},
        path_patterns={"jobId": rules.JOB_ID_PATTERN},
        run=routes.run_job_audit,
        resource="agentledger://hire/jobs/{jobId}/audit",
    ),
    Operation(
        "GET",
        "/api/a2a/registry",
        "hireRegistry",
        "Services for hire, best reputation first (public)",
        models.RegistryResponse,
        query=models.RegistryQuery,
        auth="none",
        errors={422: ("invalid_cursor", "invalid_amount", "invalid_field")},
        tags=_TAGS,
        description="Filters: serviceType, wallet, maxPrice (USDC), minScore (0-100), escrow=true (escrow-hirable "
        "only), healthy=true; `limit` (1-100, default 20) and `cursor` page through. Ties go to the lower "
        "wallet id. `priceUsdc` is what a standard hire charges and, when escrow.available, exactly what "
        "createJob locks (with escrow.slaSeconds). Providers paused for a sale (listed in the drop) are not "
        "listed.",
        mcp_default=True,
        run=routes.run_registry,
        scope="read",
        resource="agentledger://hire/registry",
    ),
    Operation(
        "GET",
        "/api/a2a/reputation",
        "hireReputation",
        "A service's reputation, its formula and the settled jobs (with audit entries) it came from",
        models.ReputationResponse,
        query=models.ReputationQuery,
        auth="none",
        errors={422: ("invalid_cursor",), 404: ("service_not_found",)},
        tags=_TAGS,
        run=routes.run_reputation,
        scope="read",
    ),
]
