// Generated from the agentledger OpenAPI document by scripts/generate.mjs (openapi-typescript): do not edit.
// Regenerate with `make sdk-types` at the repository's root.

export interface paths {
    "/api/agents/register": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Register an agent
         * @description Without a key: creates an account and returns its API key once (Idempotency-Key is refused then: the key could not be replayed). With an account-scoped key: adds an agent to that account.
         */
        post: operations["registerAgent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/earn": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Report an earning
         * @description Credits the agent the net of the split (owner and agent cuts), the toll to the service and, when the agent was referred, the referral cut to the referrer's owner.
         */
        post: operations["earn"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/spend": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Spend from the balance
         * @description Debits the agent's self part first, then its owner part; more than the balance is refused.
         */
        post: operations["spend"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/balance": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An agent's balance and totals */
        get: operations["getBalance"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/identity": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The agent's UUID for a wallet */
        get: operations["getIdentity"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/earn/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Report several earnings at once, all or none
         * @description One transaction: an invalid item (param payments[i].field) refuses the whole batch.
         */
        post: operations["earnBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/compound": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Move a share of the balance into the reinvested bucket */
        post: operations["compound"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/memory": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Memories whose key contains query, by key, paginated */
        get: operations["listMemories"];
        put?: never;
        /** Store a key-value memory */
        post: operations["writeMemory"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/brain": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The agent's brain and niche weights (shared with the network) */
        get: operations["getBrain"];
        put?: never;
        /** Record a listing or a sale */
        post: operations["updateBrain"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Count a run (per agent, UTC day and niche) */
        post: operations["recordRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/network": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Network totals */
        get: operations["getNetwork"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** A self-serve API key, one per email, shown once */
        post: operations["createKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness and the chain view */
        get: operations["healthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/schema": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The OpenAPI 3.1 document of this API */
        get: operations["getOpenApiSchema"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/agent.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The pre-1.0 A2A agent card (protocol 0.3.0, what a2a-sdk 0.3.x clients read) */
        get: operations["getAgentCardLegacy"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/agent-card.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The A2A 1.0 agent card of the service */
        get: operations["getAgentCard"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/agents/{agent_uuid}/log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Log a decision (hashes only) to the agent's tamper-evident decision log
         * @description Chain rule: chain_hash = SHA-256(agent_id:seq:prev_hash:payload_hash), prev_hash of the first entry 'genesis', payload_hash = SHA-256(RFC 8785 JSON of the stored entry). Rate limit: 1000 per hour per key (fixed UTC hour; 429 with Retry-After). See /methodology.
         */
        post: operations["logDecision"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit/checkpoints": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The log's size and root, and every checkpoint anchored on-chain */
        get: operations["auditCheckpoints"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit/proof/{audit_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** RFC 9162 inclusion proof of an audit entry */
        get: operations["auditInclusionProof"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/audit/consistency": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** RFC 9162 consistency proof between two tree sizes */
        get: operations["auditConsistencyProof"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/checkout_sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a checkout session
         * @description Amounts are integers of micro-USDC (currency usdc). With webhook_url, the 201 carries webhook_secret (HMAC key of the order webhooks) once: an Idempotency-Key replay of it omits the secret. Unpaid sessions expire after the configured TTL.
         */
        post: operations["createCheckoutSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/checkout_sessions/{session_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Retrieve a checkout session */
        get: operations["getCheckoutSession"];
        put?: never;
        /** Update line items or buyer of an incomplete session */
        post: operations["updateCheckoutSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/checkout_sessions/{session_id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel a checkout session */
        post: operations["cancelCheckoutSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/checkout_sessions/{session_id}/complete": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Fund the escrow job from the buyer's approved USDC and create the order
         * @description payment_data.handler_id must be service-usdc-commerce-v1; payment_data.instrument.credential.token is the buyer's 0x address, which must have approved the PaymentGateway for the session total; payment_data.instrument.credential.signature is that address's EIP-712 signature of the session's Funding consent (core.checkout.rules.checkout_typed_data; the session's payment handler config carries it as typed_data, with message.buyer to set to that address): Funding(bytes32 jobId,address buyer,uint256 providerTokenId,uint256 amount,uint64 deadline), domain {name: 'agentledger PaymentGateway', version: '1', chainId, verifyingContract: the gateway}
         */
        post: operations["completeCheckoutSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/orders/{order_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An order: public fields; line items and totals for any key; buyer details for the funding key */
        get: operations["getOrder"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/providers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Link an agent as a provider (mints its agent NFT)
         * @description The self wallet signs (EIP-191) 'agentledger provider link\nchain: <id>\nagent: <agl_ id>\nself_wallet: <address>\nowner: <address>\ntimestamp: <unix s>' (EIP-55 addresses, +-5 min window).
         */
        post: operations["linkProvider"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/providers/{agent_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A linked provider (public) */
        get: operations["getProvider"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/providers/{agent_id}/webhook": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Register the provider's webhook (news of its orders)
         * @description Key of the agent or its account. The provider is sent `order.created` (the order id, service_job_id, amount in micro-USDC, deadline, buyer_address, line_items) when an order of its is created, then `job.state_changed` on each move, signed as every webhook (X-Service-Signature and the Standard Webhooks headers) with `webhook_secret`, shown once in this answer; each call rotates it. http(s) only; private, loopback and link-local targets are refused (also after DNS resolution).
         */
        post: operations["setProviderWebhook"];
        /** Stop the provider's order webhooks */
        delete: operations["deleteProviderWebhook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/providers/{agent_id}/orders": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The provider's orders, newest first
         * @description Key of the agent or its account. Each order: id, status, service_job_id, settlement_tx_hash, amount (micro-USDC), deadline, buyer_address, deliverable_cid, line_items. Paginated: pass next_cursor as cursor while has_more.
         */
        get: operations["listProviderOrders"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/items": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List catalogue items (public) */
        get: operations["listItems"];
        put?: never;
        /**
         * Publish a catalogue item
         * @description Tiers: standard 48 h (default 250 USDC), rush 24 h (375 USDC), deep 72 h (500 USDC); `price` (USDC) overrides the tier's default.
         */
        post: operations["createItem"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/items/{item_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A catalogue item (public) */
        get: operations["getItem"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/orders/{order_id}/acknowledge": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Provider: acknowledge an order
         * @description Signed by the provider's self wallet (EIP-191) over 'acknowledge:{order_id}:{timestamp}'.
         */
        post: operations["acknowledgeOrder"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/orders/{order_id}/start": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Provider: start an order
         * @description Signed by the provider's self wallet (EIP-191) over 'start:{order_id}:{timestamp}'. An order may be started straight from created (acknowledge is optional).
         */
        post: operations["startOrder"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/orders/{order_id}/fail": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Provider: fail an order
         * @description Signed by the provider's self wallet (EIP-191) over 'fail:{order_id}:{timestamp}' or, with a reason (1-280 printable characters, published in the history and the audit log), over 'fail:{order_id}:{timestamp}:{reason}'.
         */
        post: operations["failOrder"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/orders/{order_id}/recover": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Provider: recover an order
         * @description Signed by the provider's self wallet (EIP-191) over 'recover:{order_id}:{timestamp}'.
         */
        post: operations["recoverOrder"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/orders/{order_id}/deliverables": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Provider: upload the deliverable
         * @description multipart/form-data (one `file` part) or JSON {content}, signed in the headers X-Provider-Timestamp (unix s), X-Content-SHA256 (hex SHA-256 of the exact bytes: the file part, or the content's RFC 8785 JSON) and X-Provider-Signature (EIP-191 over 'deliver:{order_id}:{sha256}:{timestamp}'), all checked before the body is read. One upload per order and two per provider are read at a time (409 / 429 past them); the body must arrive within the read deadline (408) and hash to the signed SHA-256 (400 digest_mismatch). Answers the bytes' CID (Kubo's `ipfs add --cid-version=1`), served at /ipfs/{cid}. At most 20 uploads per order; the last one is the order's deliverable. As an MCP tool (no headers): {content, timestamp, signature}, signed alike.
         */
        post: operations["uploadDeliverable"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/acp/orders/{order_id}/complete": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Provider: attest completion and release the escrow
         * @description Signed over 'complete:{jobId}:{cid}:{timestamp}' (the gateway's attestationMessage); sends the gateway release and answers its transaction. The order becomes released when the release is final on-chain.
         */
        post: operations["completeOrder"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ipfs/{cid}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Stored deliverable content by CID, like an IPFS path gateway
         * @description The bytes whose CID (as `ipfs add --cid-version=1` of Kubo computes it) is `cid`; CIDv0 is accepted. Immutable: ETag is the CID, If-None-Match answers 304.
         */
        get: operations["ipfsGet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/services": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The provider agent's own services, with health and escrow availability */
        get: operations["listHireServices"];
        put?: never;
        /**
         * Publish (or replace) a service this provider agent offers for hire
         * @description `created`: a new service, or the agent's service of that type replaced. The runner's requests are signed with Standard Webhooks headers; `signingSecret` (whsec_ form) is shown once, when the service is created or `rotateSecret` is true. An escrow hire locks the on-chain AgentEscrow.priceOf: set it equal to `price` (`escrow.available` says whether it is).
         */
        post: operations["publishHireService"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/services/{serviceType}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Withdraw one of the provider agent's services (no longer hirable) */
        delete: operations["withdrawHireService"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/hire": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Standard hire: run a job at a provider, charged to the caller agent's balance
         * @description The price is reserved on the caller's balance, the provider is called within its SLA, then in one transaction the provider is paid through the earn split and the caller charged. A failed run (5xx with the error shape plus jobId, amountCharged 0) charges nothing. The same Idempotency-Key runs the job once and replays its answer, failures included. A caller listed for sale (paused) hires nobody (409 agent_paused); a paused provider is never chosen (409 provider_paused when named).
         */
        post: operations["hireAgent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/escrow": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An escrow job's on-chain status (AgentEscrow.jobStatus) */
        get: operations["escrowStatus"];
        put?: never;
        /**
         * Escrow hire: run the job locked by createJob; release on success, refund on failure
         * @description No API key: `signature` is the on-chain caller's EIP-191 signature of the lines 'agentledger escrow hire', 'chain: <id>', 'escrow: <AgentEscrow address, EIP-55>', 'job: <escrowJobId, lowercase>', 'input: <SHA-256 hex of the input's RFC 8785 JSON>', 'timestamp: <unix s>' joined by '\n' (+-300 s, used once). A job runs at most once; a later POST by its caller returns the stored result. `settlement` is pending while a release or refund is retried. No API key is needed (the signature authenticates); a key given needs scope spend, and its daily cap counts the locked amount.
         */
        post: operations["escrowHire"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/hire/{jobId}/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A hire job's audit stream: every move, in order, with its chain and Merkle hashes (public)
         * @description Standard and escrow jobs alike (the stream hire:<jobId>). Check it without trusting this service: each chainHash is SHA-256(prevHash || canonicalPayload), each entry a leaf of the log anchored on-chain (proofUrl). Public, as every entry already is at /verify/{auditId}.
         */
        get: operations["hireJobAudit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/registry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Services for hire, best reputation first (public)
         * @description Filters: serviceType, wallet, maxPrice (USDC), minScore (0-100), escrow=true (escrow-hirable only), healthy=true; `limit` (1-100, default 20) and `cursor` page through. Ties go to the lower wallet id. `priceUsdc` is what a standard hire charges and, when escrow.available, exactly what createJob locks (with escrow.slaSeconds). Providers paused for a sale (listed in the drop) are not listed.
         */
        get: operations["hireRegistry"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/reputation": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A service's reputation, its formula and the settled jobs (with audit entries) it came from */
        get: operations["hireReputation"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/verify/{audit_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Verify an audit entry (HTML, or JSON with Accept: application/json or ?format=json) */
        get: operations["verifyEntry"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/methodology": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The formulas (HTML, or JSON with Accept: application/json or ?format=json) */
        get: operations["methodology"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/well-known/decisional-logging.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Decision logging discovery document */
        get: operations["decisionLoggingDiscoveryLegacy"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/decisional-logging.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Decision logging discovery document */
        get: operations["decisionLoggingDiscovery"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/drop": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Listings: one (listingId, with drop_offers[] and drop_sales[]), an agent's latest (agentId), or a page
         * @description Without listingId or agentId: {listings[], total, page, pages} of `status` (default active), newest first. One listing also shows its offers (fillable or not, and why; signatures to the seller only), its sales with their due-diligence bundle, and the EIP-712 Offer template to sign.
         */
        get: operations["dropBrowse"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/drop/mint": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Mint the agent's NFT on demand (every agent can be sold)
         * @description The self wallet signs (EIP-191) 'agentledger agent mint\nchain: <id>\nagent: <agl_ id>\nself_wallet: <address>\nowner: <address>\ntimestamp: <unix s>' (EIP-55, +-5 min). 200 with the existing token when the agent has one.
         */
        post: operations["dropMint"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/drop/statement": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The operator-signed earnings statement AgentMarketplace.list needs (good for one listing, 10 min)
         * @description The agent's reported earnings, signed by the operator (EIP-712 EarningsStatement, domain 'agentledger Marketplace'), for the NFT owner sellerAddress to pass with its signature to list(tokenId, askingPrice, floorPrice, duration, statement, signature): the contract adds the registry's on-chain earnings and refuses a floor under 25% of the sum (FloorTooLow). uint256 fields are decimal strings of raw units (micro-USDC).
         */
        post: operations["dropStatement"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/drop/list": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Record the agent's on-chain listing (AgentMarketplace.list); the agent is paused
         * @description A paused agent still earns (its balance stays the seller's), spends nothing and cannot be hired. The floor (the listing's on-chain floorPrice, frozen) is at least 25% of the agent's lifetime earnings (reported + on-chain): the contract checks it against the statement of POST /statement.
         */
        post: operations["dropList"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/drop/offer": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Put a signed offer in the book (the buyer's EIP-712 Offer); the seller is e-mailed */
        post: operations["dropOffer"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/drop/accept": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Record a buyer's commit (buy-now by the buyer, or the seller's acceptOffer) with its due-diligence bundle */
        post: operations["dropAccept"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/drop/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Record the seller's on-chain cancel (refused once a buyer committed) */
        post: operations["dropCancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/drop/claim": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The new NFT owner claims a sold agent and gets its key (once)
         * @description The NFT owner signs (EIP-191) 'agentledger agent claim\nchain: <id>\nagent: <agl_ id>\ntoken: <id>\nowner: <address>\ntimestamp: <unix s>'. With an account key the agent joins that account (an agent-scoped key comes back); without one its holding account becomes yours (an account key).
         */
        post: operations["dropClaim"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/drop/watch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Watch an agent: e-mails on listing and commit, or listing.state_changed webhooks */
        post: operations["dropWatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/drop/watch/{watch_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Stop watching */
        delete: operations["dropUnwatch"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/drop/assets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An agent's asset manifest (its deliverables, transferred_with_nft or not) */
        get: operations["dropAssets"];
        put?: never;
        /** Set a deliverable's transferred_with_nft (default true; frozen once a buyer committed) */
        post: operations["dropFlagAsset"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/a2a/drop/unsubscribe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The unsubscribe link of a drop e-mail (a page with a button)
         * @description HTML (a page whose button POSTs) unless Accept is application/json.
         */
        get: operations["dropUnsubscribePage"];
        put?: never;
        /**
         * Unsubscribe an address from drop e-mails (also RFC 8058 one-click)
         * @description JSON, or an HTML page when posted by the page's form. Mail clients' one-click List-Unsubscribe-Post lands here too.
         */
        post: operations["dropUnsubscribe"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/oauth-protected-resource": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** RFC 9728 protected-resource metadata of the REST API */
        get: operations["getProtectedResourceMetadata"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/oauth-protected-resource/api/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** RFC 9728 protected-resource metadata of the MCP endpoint */
        get: operations["getMcpProtectedResourceMetadata"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** AcceptRequest */
        AcceptRequest: {
            /** Listingid */
            listingId: string;
            /** Buynow */
            buyNow: boolean;
            /** Txhash */
            txHash: string;
            /**
             * Buyeremail
             * @default null
             */
            buyerEmail?: string | null;
        };
        /** Agent */
        Agent: {
            /**
             * Id
             * Format: uuid
             * @description the agent's UUID
             */
            id: string;
            /**
             * Wallet
             * @description the agent's wallet id
             */
            wallet: string;
            /** Name */
            name: string;
            /** Specialty */
            specialty: string;
            /**
             * Balance
             * @description USDC, at most 6 decimals
             */
            balance: number;
            /** Referral Code */
            referral_code: string;
        };
        /** AgentCapabilities */
        AgentCapabilities: {
            /**
             * Streaming
             * @default false
             */
            streaming?: boolean;
            /**
             * Pushnotifications
             * @default false
             */
            pushNotifications?: boolean;
            /**
             * Extensions
             * @default null
             */
            extensions?: components["schemas"]["AgentExtension"][] | null;
            /**
             * Extendedagentcard
             * @default false
             */
            extendedAgentCard?: boolean;
        };
        /**
         * AgentCard
         * @description A2A 1.0 AgentCard (the subset this service fills in).
         */
        AgentCard: {
            /** Name */
            name: string;
            /** Description */
            description: string;
            /** Supportedinterfaces */
            supportedInterfaces: components["schemas"]["AgentInterface"][];
            provider: components["schemas"]["AgentProvider"];
            /** Version */
            version: string;
            /** Documentationurl */
            documentationUrl: string;
            capabilities: components["schemas"]["AgentCapabilities"];
            /** Securityschemes */
            securitySchemes: {
                [key: string]: components["schemas"]["SecurityScheme"];
            };
            /** Securityrequirements */
            securityRequirements: components["schemas"]["SecurityRequirement"][];
            /** Defaultinputmodes */
            defaultInputModes: string[];
            /** Defaultoutputmodes */
            defaultOutputModes: string[];
            /** Skills */
            skills: components["schemas"]["AgentSkill"][];
        };
        /** AgentExtension */
        AgentExtension: {
            /** Uri */
            uri: string;
            /**
             * Description
             * @default null
             */
            description?: string | null;
            /**
             * Required
             * @default null
             */
            required?: boolean | null;
            /**
             * Params
             * @default null
             */
            params?: {
                [key: string]: unknown;
            } | null;
        };
        /** AgentInterface */
        AgentInterface: {
            /** Url */
            url: string;
            /**
             * Protocolbinding
             * @description JSONRPC, GRPC or HTTP+JSON
             */
            protocolBinding: string;
            /** Protocolversion */
            protocolVersion: string;
        };
        /** AgentProvider */
        AgentProvider: {
            /** Organization */
            organization: string;
            /** Url */
            url: string;
        };
        /** AgentSkill */
        AgentSkill: {
            /** Id */
            id: string;
            /** Name */
            name: string;
            /** Description */
            description: string;
            /** Tags */
            tags: string[];
            /** Examples */
            examples?: string[];
            /**
             * Inputmodes
             * @default null
             */
            inputModes?: string[] | null;
            /**
             * Outputmodes
             * @default null
             */
            outputModes?: string[] | null;
        };
        /** @description any JSON; no string or key holds a control character but tab, LF and CR */
        AnyJson: null | boolean | number | string | unknown[] | {
            [key: string]: components["schemas"]["AnyJson"];
        };
        /** AssetFlagRequest */
        AssetFlagRequest: {
            /** Agentid */
            agentId: string;
            /** Cid */
            cid: string;
            /** Transferredwithnft */
            transferredWithNft: boolean;
        };
        /** AssetsResponse */
        AssetsResponse: {
            /** Agentid */
            agentId: string;
            /** Assets */
            assets: {
                [key: string]: unknown;
            }[];
        } & {
            [key: string]: unknown;
        };
        /**
         * AuditChain
         * @description The order's audit trail in the spec's shape: {entries: [...]}, oldest first.
         */
        AuditChain: {
            /** Entries */
            entries: components["schemas"]["AuditChainEntry"][];
        };
        /** AuditChainEntry */
        AuditChainEntry: {
            /** Audit Id */
            audit_id: number;
            /** Seq */
            seq: number;
            /** Prev Hash */
            prev_hash: string;
            /** Chain Hash */
            chain_hash: string;
            /** Payload */
            payload: {
                [key: string]: unknown;
            };
        };
        /** AuditStreamEntry */
        AuditStreamEntry: {
            /** Auditid */
            auditId: number;
            /** Seq */
            seq: number;
            /** Kind */
            kind: string;
            /** Createdat */
            createdAt: string;
            /** Payload */
            payload: {
                [key: string]: unknown;
            };
            /**
             * Canonicalpayload
             * @description the payload's RFC 8785 JSON: exactly the bytes hashed
             */
            canonicalPayload: string;
            /** Prevhash */
            prevHash: string;
            /** Chainhash */
            chainHash: string;
            /**
             * Leafhash
             * @description its Merkle leaf hash, 0x hex
             */
            leafHash: string;
            /** Verifyurl */
            verifyUrl: string;
            /** Proofurl */
            proofUrl: string;
        } & {
            [key: string]: unknown;
        };
        /** BalanceResponse */
        BalanceResponse: {
            /**
             * Balance
             * @description USDC, at most 6 decimals
             */
            balance: number;
            /**
             * Ownerbalance
             * @description USDC, at most 6 decimals
             */
            ownerBalance: number;
            /**
             * Agentselfbalance
             * @description USDC, at most 6 decimals
             */
            agentSelfBalance: number;
            /**
             * Reinvested
             * @description moved aside by POST /api/agents/compound
             */
            reinvested: number;
            /**
             * Totalearned
             * @description reportedEarned + settledEarned
             */
            totalEarned: number;
            /**
             * Reportedearned
             * @description earnings reported with /earn, referral credits included
             */
            reportedEarned: number;
            /**
             * Settledearned
             * @description escrow payouts settled on-chain to the agent as a provider (paid out, not in balance)
             */
            settledEarned: number;
            /** Totaltransactions */
            totalTransactions: number;
            /** Memoryentries */
            memoryEntries: number;
        };
        /** Brain */
        Brain: {
            /** Niches */
            niches: {
                [key: string]: components["schemas"]["NicheStats"];
            };
            /**
             * Prices
             * @description listings, sales and revenue at each price; the key is the price in USDC, e.g. "19.99"
             */
            prices: {
                [key: string]: components["schemas"]["PriceStats"];
            };
            /**
             * Topproducts
             * @description named products, most sold first
             */
            topProducts: components["schemas"]["TopProduct"][];
            /** Totallisted */
            totalListed: number;
            /** Totalsold */
            totalSold: number;
            /**
             * Totalrevenue
             * @description USDC, at most 6 decimals
             */
            totalRevenue: number;
            /** Winrate */
            winRate: number;
            /** Strategynote */
            strategyNote: string;
            /**
             * Lastupdated
             * Format: date-time
             */
            lastUpdated: string | null;
        };
        /** BrainResponse */
        BrainResponse: {
            brain: components["schemas"]["Brain"];
            /**
             * Weights
             * @description smoothed win rates per niche, summing to 1
             */
            weights: {
                [key: string]: number;
            };
        };
        /**
         * BrainUpdateRequest
         * @description revenue only with a sale (400 invalid_field otherwise; default: the price).
         */
        BrainUpdateRequest: {
            /** Agentid */
            agentId: string;
            /**
             * Action
             * @enum {string}
             */
            action: "listed" | "sold";
            /** Niche */
            niche: string;
            /**
             * Price
             * @description USDC, at most 6 decimals (a JSON number, never a string)
             */
            price: number;
            /**
             * Revenue
             * @default null
             */
            revenue?: number | null;
            /**
             * Name
             * @default null
             */
            name?: string | null;
        };
        /** BrainUpdateResponse */
        BrainUpdateResponse: {
            brain: components["schemas"]["Brain"];
            /**
             * Weights
             * @description smoothed win rates per niche, summing to 1
             */
            weights: {
                [key: string]: number;
            };
            /**
             * Success
             * @constant
             */
            success: true;
        };
        /** BuyerRequest */
        BuyerRequest: {
            /**
             * Email
             * @default null
             */
            email?: string | null;
            /**
             * First Name
             * @default null
             */
            first_name?: string | null;
            /**
             * Last Name
             * @default null
             */
            last_name?: string | null;
        };
        /** CancelRequest */
        CancelRequest: {
            /** Listingid */
            listingId: string;
            /** Txhash */
            txHash: string;
        };
        CanonicalJson: boolean | number | string | unknown[] | {
            [key: string]: components["schemas"]["CanonicalJson"];
        } | null;
        /** CheckpointView */
        CheckpointView: {
            /** Index */
            index: number;
            /** Tree Size */
            tree_size: number;
            /** Root */
            root: string;
            /** Anchorer */
            anchorer: string;
            /** Block Number */
            block_number: number;
            /** Tx Hash */
            tx_hash: string;
            /** Explorer Url */
            explorer_url: string | null;
        };
        /** CheckpointsResponse */
        CheckpointsResponse: {
            /** Chain Id */
            chain_id: number;
            /** Network */
            network: string;
            /** Contract */
            contract: string | null;
            /** Log Size */
            log_size: number;
            /** Log Root */
            log_root: string;
            /** Checkpoints */
            checkpoints: components["schemas"]["CheckpointView"][];
        };
        /** ClaimRequest */
        ClaimRequest: {
            /** Agentid */
            agentId: string;
            /** Owneraddress */
            ownerAddress: string;
            /** Timestamp */
            timestamp: number;
            /** Signature */
            signature: string;
        };
        /** ClaimResponse */
        ClaimResponse: {
            /** Agent */
            agent: {
                [key: string]: unknown;
            };
            /** Api Key */
            api_key: string;
            /** Scope */
            scope: string;
        } & {
            [key: string]: unknown;
        };
        /**
         * CompleteAttestation
         * @description The provider's completion (api.provider_orders reads it): the deliverable's CID, signed.
         */
        CompleteAttestation: {
            /**
             * Cid
             * @description the deliverable's CID
             */
            cid: string;
            /**
             * Timestamp
             * @description unix seconds; within 300 s of the server's clock
             */
            timestamp: number;
            /**
             * Signature
             * @description EIP-191, 65 bytes hex
             */
            signature: string;
        };
        /** CompleteBuyer */
        CompleteBuyer: {
            /**
             * Email
             * @default null
             */
            email?: string | null;
            /**
             * First Name
             * @default null
             */
            first_name?: string | null;
            /**
             * Last Name
             * @default null
             */
            last_name?: string | null;
        };
        /** CompleteResponse */
        CompleteResponse: {
            /** Txhash */
            txHash: string;
            /** Jobid */
            jobId: string;
            /** Status */
            status: string;
        };
        /** CompoundRequest */
        CompoundRequest: {
            /** Agentid */
            agentId: string;
            /**
             * Reinvestpercent
             * @default 20
             */
            reinvestPercent?: number;
        };
        /** CompoundResponse */
        CompoundResponse: {
            /**
             * Success
             * @constant
             */
            success: true;
            /**
             * Balance
             * @description USDC, at most 6 decimals
             */
            balance: number;
            /**
             * Reinvested
             * @description USDC, at most 6 decimals
             */
            reinvested: number;
            /**
             * Moved
             * @description moved from the spendable balance into reinvested by this call
             */
            moved: number;
            /**
             * Ownerbalance
             * @description USDC, at most 6 decimals
             */
            ownerBalance: number;
            /**
             * Agentselfbalance
             * @description USDC, at most 6 decimals
             */
            agentSelfBalance: number;
            /**
             * Transactionid
             * @description the ledger row; null when nothing moved
             */
            transactionId: number | null;
        };
        /** ConsistencyResponse */
        ConsistencyResponse: {
            /** First */
            first: number;
            /** Second */
            second: number;
            /** First Root */
            first_root: string;
            /** Second Root */
            second_root: string;
            /** Proof */
            proof: string[];
        };
        /** Credential */
        Credential: {
            /**
             * Token
             * @description the paying 0x address (it approved the gateway for the total)
             */
            token: string;
            /**
             * Signature
             * @description EIP-712 signature by `token` of the session's Funding typed data (core.checkout.rules.checkout_typed_data; the session's payment handler config gives it as typed_data, message.buyer to fill)
             */
            signature: string;
        } & {
            [key: string]: components["schemas"]["AnyJson"];
        };
        /** DatabaseView */
        DatabaseView: {
            /**
             * State
             * @description down: it did not answer within a second (calls answer 503)
             * @enum {string}
             */
            state: "up" | "down";
            /** Error */
            error?: string;
        };
        /**
         * DecisionLogRequest
         * @description One decision, as hashes and non-identifying fields only (unknown fields are refused).
         */
        DecisionLogRequest: {
            /**
             * Event Type
             * @description the tier; `critical` needs a non-empty evidence_manifest
             * @enum {string}
             */
            event_type: "routine" | "high_stakes" | "critical";
            /**
             * Content Hash
             * @description SHA-256, 64 lowercase hex digits
             */
            content_hash: string;
            /** Model Id */
            model_id: string;
            /** Model Version */
            model_version: string;
            /**
             * Evidence Manifest
             * @default null
             */
            evidence_manifest?: components["schemas"]["EvidenceItem"][] | null;
            /**
             * Correlation Ref
             * @default null
             */
            correlation_ref?: string | null;
            /**
             * Webhook Url
             * @default null
             */
            webhook_url?: string | null;
            /**
             * Webhook Secret
             * @default null
             */
            webhook_secret?: string | null;
        };
        /** DecisionLogResponse */
        DecisionLogResponse: {
            /** Audit Id */
            audit_id: number;
            /**
             * Chain Hash
             * @description SHA-256, 64 lowercase hex digits
             */
            chain_hash: string;
            /**
             * Content Hash
             * @description SHA-256, 64 lowercase hex digits
             */
            content_hash: string;
            /**
             * Tier
             * @enum {string}
             */
            tier: "routine" | "high_stakes" | "critical";
            /**
             * Timestamp
             * Format: date-time
             */
            timestamp: string;
            /** Verification Url */
            verification_url: string;
            /**
             * Webhook Secret
             * @default null
             */
            webhook_secret?: string | null;
        };
        /**
         * DecisionLoggingDiscovery
         * @description Endpoint, tiers, rate limit, verification, evidence options, webhook behaviour.
         */
        DecisionLoggingDiscovery: {
            /** Endpoint */
            endpoint: string;
            /** Tiers */
            tiers: {
                [key: string]: string;
            };
            /** Methodology */
            methodology: string;
        } & {
            [key: string]: unknown;
        };
        /**
         * DeliverableContent
         * @description A JSON deliverable as api.provider_orders takes it: content with an RFC 8785 form.
         */
        DeliverableContent: {
            /** Content */
            content: {
                [key: string]: components["schemas"]["CanonicalJson"];
            };
            /**
             * Timestamp
             * @description unix seconds; within 300 s of the server's clock
             */
            timestamp: number;
            /**
             * Signature
             * @description EIP-191, 65 bytes hex
             */
            signature: string;
        };
        /**
         * DeliverableForm
         * @description The multipart/form-data fields of a deliverable upload (api.provider_orders reads them).
         */
        DeliverableForm: {
            /**
             * File
             * Format: binary
             * @description the deliverable's bytes, at most 32 MiB
             */
            file: string;
            /**
             * Timestamp
             * @description unix seconds; within 300 s of the server's clock
             */
            timestamp: number;
            /**
             * Signature
             * @description EIP-191, 65 bytes hex
             */
            signature: string;
        };
        /** DeliverableResponse */
        DeliverableResponse: {
            /** Cid */
            cid: string;
            /** Size */
            size: number;
            /** Url */
            url: string;
        };
        /**
         * EarnBatchRequest
         * @description Several earnings credited atomically (all or none), each exactly as POST /earn would.
         */
        EarnBatchRequest: {
            /** Payments */
            payments: components["schemas"]["EarnRequest"][];
        };
        /** EarnBatchResponse */
        EarnBatchResponse: {
            /**
             * Success
             * @constant
             */
            success: true;
            /** Count */
            count: number;
            /** Results */
            results: components["schemas"]["EarnResponse"][];
        };
        /** EarnRequest */
        EarnRequest: {
            /** Agentid */
            agentId: string;
            /**
             * Amount
             * @description USDC, at most 6 decimals (a JSON number, never a string)
             */
            amount: number;
            /**
             * Source
             * @description where the earning came from
             */
            source: string;
        };
        /** EarnResponse */
        EarnResponse: {
            /**
             * Success
             * @constant
             */
            success: true;
            /**
             * Balance
             * @description USDC, at most 6 decimals
             */
            balance: number;
            /**
             * Toll
             * @description the service's cut (same as serviceCut)
             */
            toll: number;
            /**
             * Net
             * @description what the agent was credited: ownerCut + agentCut
             */
            net: number;
            /**
             * Ownercut
             * @description USDC, at most 6 decimals
             */
            ownerCut: number;
            /**
             * Agentcut
             * @description USDC, at most 6 decimals
             */
            agentCut: number;
            /**
             * Servicecut
             * @description USDC, at most 6 decimals
             */
            serviceCut: number;
            /**
             * Referralcut
             * @description credited to the referrer's owner; 0 without a referrer
             */
            referralCut: number;
            /**
             * Ownerbalance
             * @description USDC, at most 6 decimals
             */
            ownerBalance: number;
            /**
             * Agentselfbalance
             * @description USDC, at most 6 decimals
             */
            agentSelfBalance: number;
            /**
             * Transactionid
             * @description the ledger row of this earning
             */
            transactionId: number;
            /** Message */
            message: string;
        };
        /** EarnSplit */
        EarnSplit: {
            /**
             * Ownercut
             * @description USDC, at most 6 decimals
             */
            ownerCut: number;
            /**
             * Agentcut
             * @description USDC, at most 6 decimals
             */
            agentCut: number;
            /**
             * Servicecut
             * @description USDC, at most 6 decimals
             */
            serviceCut: number;
            /**
             * Referralcut
             * @description USDC, at most 6 decimals
             */
            referralCut: number;
        } & {
            [key: string]: unknown;
        };
        /** Empty */
        Empty: {
            [key: string]: unknown;
        };
        /**
         * Error
         * @description The one error shape of every failure (ACP's flat error).
         */
        Error: {
            /**
             * Type
             * @description invalid_request or service_error
             * @example invalid_request
             */
            type: string;
            /**
             * Code
             * @description machine-readable code, e.g. insufficient_balance
             */
            code: string;
            /**
             * Message
             * @description human-readable explanation
             */
            message: string;
            /**
             * Param
             * @description the offending field, parameter or header, or null
             */
            param: string | null;
        };
        /** EscrowRequest */
        EscrowRequest: {
            /**
             * Escrowjobid
             * @description the bytes32 job id given to createJob
             */
            escrowJobId: string;
            /**
             * Txhash
             * @description the createJob transaction
             */
            txHash: string;
            /** Servicetype */
            serviceType: string;
            /** Input */
            input: {
                [key: string]: components["schemas"]["AnyJson"];
            };
            /** Providerwallet */
            providerWallet: string;
            /** Timestamp */
            timestamp: number;
            /**
             * Signature
             * @description the caller's EIP-191 signature (see description)
             */
            signature: string;
            /**
             * Webhookurl
             * @default null
             */
            webhookUrl?: string | null;
            /**
             * Webhooksecret
             * @default null
             */
            webhookSecret?: string | null;
        };
        /** EscrowResponse */
        EscrowResponse: {
            /** Success */
            success: boolean;
            /** Jobid */
            jobId: string;
            /** Status */
            status: string;
            /** Servicetype */
            serviceType: string;
            /** Providerwallet */
            providerWallet: string | null;
            /**
             * Amountusdc
             * @description USDC, at most 6 decimals
             */
            amountUsdc: number;
            /** Inputsha256 */
            inputSha256: string;
            /** Responsems */
            responseMs: number | null;
            /**
             * Settlement
             * @description released, refunded or pending (retried until mined)
             */
            settlement: string;
            /** Final */
            final: boolean;
            /**
             * Output
             * @default null
             */
            output?: string | null;
            /**
             * Outputsha256
             * @default null
             */
            outputSha256?: string | null;
            /**
             * Outputcid
             * @default null
             */
            outputCid?: string | null;
            /**
             * Releasetx
             * @default null
             */
            releaseTx?: string | null;
            /** @default null */
            earnSplit?: components["schemas"]["EarnSplit"] | null;
            /**
             * Error
             * @default null
             */
            error?: string | null;
            /**
             * Message
             * @default null
             */
            message?: string | null;
            /**
             * Refundtx
             * @default null
             */
            refundTx?: string | null;
            /**
             * Auditid
             * @description the job's latest audit entry (GET /api/a2a/hire/{jobId}/audit)
             */
            auditId: number;
        } & {
            [key: string]: unknown;
        };
        /** EscrowStatusResponse */
        EscrowStatusResponse: {
            /** Jobid */
            jobId: string;
            /**
             * Status
             * @description locked, released, refunded or not_found
             */
            status: string;
            /** Caller */
            caller: string | null;
            /**
             * Amountusdc
             * @description USDC, at most 6 decimals
             */
            amountUsdc: number;
            /** Released */
            released: boolean;
            /** Refunded */
            refunded: boolean;
        } & {
            [key: string]: unknown;
        };
        /** EvidenceItem */
        EvidenceItem: {
            /**
             * Type
             * @enum {string}
             */
            type: "pdf" | "json" | "text";
            /**
             * Sha256
             * @description SHA-256, 64 lowercase hex digits
             */
            sha256: string;
        };
        /** FailRequest */
        FailRequest: {
            /**
             * Timestamp
             * @description unix seconds; within 300 s of the server's clock
             */
            timestamp: number;
            /**
             * Signature
             * @description EIP-191 signature, 65 bytes hex
             */
            signature: string;
            /**
             * Reason
             * @default null
             */
            reason?: string | null;
        };
        /** HTTPAuthSecurityScheme */
        HTTPAuthSecurityScheme: {
            /** Scheme */
            scheme: string;
            /**
             * Bearerformat
             * @default null
             */
            bearerFormat?: string | null;
            /**
             * Description
             * @default null
             */
            description?: string | null;
        };
        /** HealthResponse */
        HealthResponse: {
            /**
             * Status
             * @enum {string}
             */
            status: "ok" | "degraded";
            /**
             * Backend
             * @description the database the service runs on
             * @enum {string}
             */
            backend?: "sqlite" | "postgresql";
            /** Chainid */
            chainId: number;
            /** Network */
            network: string;
            /** Latestblock */
            latestBlock: number;
            /** Deployblock */
            deployBlock: number;
            /** Usdc */
            usdc: string;
            /** Contracts */
            contracts: {
                [key: string]: string;
            };
            /** Database */
            database?: components["schemas"]["DatabaseView"];
            /** Indexer */
            indexer?: components["schemas"]["IndexerView"];
            /**
             * Parts
             * @description this process's long-lived parts by name
             */
            parts?: {
                [key: string]: components["schemas"]["PartView"];
            };
            /**
             * Jobs
             * @description this process's background jobs (sweeps, outbox dispatcher, anchorer) by name
             */
            jobs?: {
                [key: string]: components["schemas"]["JobView"];
            };
        };
        /** HireAuditResponse */
        HireAuditResponse: {
            /** Jobid */
            jobId: string;
            /**
             * Kind
             * @description standard or escrow
             */
            kind: string;
            /** Status */
            status: string;
            /**
             * Stream
             * @description hire:<jobId>
             */
            stream: string;
            /**
             * Entries
             * @description every move of the job, in order (seq 1, 2, ...)
             */
            entries: components["schemas"]["AuditStreamEntry"][];
            /** Chainrule */
            chainRule: string;
            /** Merklerule */
            merkleRule: string;
            /** Methodologyurl */
            methodologyUrl: string;
        } & {
            [key: string]: unknown;
        };
        /** HireRequest */
        HireRequest: {
            /** Callerwallet */
            callerWallet: string;
            /** Servicetype */
            serviceType: string;
            /**
             * Input
             * @description the job's input (checked against the input schema)
             */
            input: {
                [key: string]: components["schemas"]["AnyJson"];
            };
            /**
             * Providerwallet
             * @description else the best-scored healthy provider
             * @default null
             */
            providerWallet?: string | null;
            /**
             * Maxprice
             * @description refuse a provider costing more (USDC)
             * @default null
             */
            maxPrice?: number | null;
            /**
             * Webhookurl
             * @default null
             */
            webhookUrl?: string | null;
            /**
             * Webhooksecret
             * @default null
             */
            webhookSecret?: string | null;
        };
        /** HireResponse */
        HireResponse: {
            /** Success */
            success: boolean;
            /** Jobid */
            jobId: string;
            /**
             * Output
             * @description the output as RFC 8785 JSON text (SHA-256 = outputSha256)
             */
            output: string;
            /** Outputsha256 */
            outputSha256: string;
            /** Outputcid */
            outputCid: string;
            /** Providerwallet */
            providerWallet: string;
            /** Servicetype */
            serviceType: string;
            /**
             * Amountcharged
             * @description USDC, at most 6 decimals
             */
            amountCharged: number;
            /** Responsems */
            responseMs: number;
            earnSplit: components["schemas"]["EarnSplit"];
            /**
             * Balance
             * @description USDC, at most 6 decimals
             */
            balance: number;
            /** Auditid */
            auditId: number;
        } & {
            [key: string]: unknown;
        };
        /**
         * HtmlPage
         * @description A page for people (text/html).
         */
        HtmlPage: string;
        /** IdentityResponse */
        IdentityResponse: {
            /**
             * Uuid
             * Format: uuid
             */
            uuid: string;
            /**
             * Wallet
             * @description the agent's wallet id
             */
            wallet: string;
        };
        /** IndexerView */
        IndexerView: {
            /**
             * State
             * @enum {string}
             */
            state: "starting" | "behind" | "synced" | "halted";
            /** Seen */
            seen: number | null;
            /** Final */
            final: number | null;
            /** Behind */
            behind: number | null;
            /**
             * Reason
             * @description why it halted (with state halted only)
             */
            reason?: string;
            /** Haltedat */
            haltedAt?: string;
            /**
             * Leader
             * @description this process follows the chain (it holds the indexer's lease)
             */
            leader: boolean;
            /**
             * Holder
             * @description the process holding the indexer's lease (null: none at the moment)
             */
            holder: string | null;
        };
        /** Instrument */
        Instrument: {
            credential: components["schemas"]["Credential"];
        } & {
            [key: string]: components["schemas"]["AnyJson"];
        };
        /**
         * IpfsContent
         * Format: binary
         * @description The stored bytes, as uploaded (when they are not a JSON object or array).
         */
        IpfsContent: string;
        /**
         * IpfsJson
         * @description Stored bytes that are a JSON object or array (what an upload of `{content: {...}}` stores).
         */
        IpfsJson: {
            [key: string]: unknown;
        } | unknown[];
        /** ItemCreateRequest */
        ItemCreateRequest: {
            /**
             * Item Id
             * @default null
             */
            item_id?: string | null;
            /** Title */
            title: string;
            /** Tier */
            tier: string;
            /**
             * Price
             * @default null
             */
            price?: number | null;
            /**
             * Agent Id
             * @default null
             */
            agent_id?: string | null;
        };
        /** ItemListResponse */
        ItemListResponse: {
            /** Data */
            data: components["schemas"]["ItemResponse"][];
            /** Has More */
            has_more: boolean;
        } & {
            [key: string]: unknown;
        };
        /** ItemRef */
        ItemRef: {
            /** Id */
            id: string;
        };
        /** ItemResponse */
        ItemResponse: {
            /** Id */
            id: string;
            /** Title */
            title: string;
            /** Tier */
            tier: string;
            /** Delivery Hours */
            delivery_hours: number;
            /** Price */
            price: unknown;
            /** Unit Amount */
            unit_amount: number;
            /** Currency */
            currency: string;
            /** Provider */
            provider: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /**
         * JobView
         * @description One background job or service: its state, schedule, last run, next run, last error, counts; with
         *     a database, `leader` (this process holds its lease and runs it) and `holder` (the process that does).
         */
        JobView: {
            /** State */
            state: string;
        } & {
            [key: string]: unknown;
        };
        JsonValue: boolean | number | string | unknown[] | {
            [key: string]: components["schemas"]["JsonValue"];
        } | null;
        /** KeyRequest */
        KeyRequest: {
            /** Email */
            email: string;
            /**
             * Mcptoolsets
             * @description MCP toolsets the key's sessions get by default, comma-separated
             * @default null
             */
            mcpToolsets?: string | null;
        };
        /** KeyResponse */
        KeyResponse: {
            /**
             * Success
             * @constant
             */
            success: true;
            /**
             * Api Key
             * @description shown once; only its hash is stored
             */
            api_key: string;
            /**
             * Accountid
             * Format: uuid
             */
            accountId: string;
            /** Email */
            email: string;
        };
        /**
         * LegacyAgentCard
         * @description A2A 0.3.0 AgentCard (the subset this service fills in): what pre-1.0 clients require, `url`
         *     (the preferred endpoint) first among them.
         */
        LegacyAgentCard: {
            /** Protocolversion */
            protocolVersion: string;
            /** Name */
            name: string;
            /** Description */
            description: string;
            /** Url */
            url: string;
            /** Preferredtransport */
            preferredTransport: string;
            /** Additionalinterfaces */
            additionalInterfaces: components["schemas"]["LegacyInterface"][];
            provider: components["schemas"]["AgentProvider"];
            /** Version */
            version: string;
            /** Documentationurl */
            documentationUrl: string;
            capabilities: components["schemas"]["LegacyCapabilities"];
            /** Securityschemes */
            securitySchemes: {
                [key: string]: components["schemas"]["LegacyHttpAuth"];
            };
            /** Security */
            security: {
                [key: string]: string[];
            }[];
            /** Defaultinputmodes */
            defaultInputModes: string[];
            /** Defaultoutputmodes */
            defaultOutputModes: string[];
            /** Skills */
            skills: components["schemas"]["AgentSkill"][];
            /**
             * Supportsauthenticatedextendedcard
             * @default false
             */
            supportsAuthenticatedExtendedCard?: boolean;
        };
        /** LegacyCapabilities */
        LegacyCapabilities: {
            /**
             * Streaming
             * @default false
             */
            streaming?: boolean;
            /**
             * Pushnotifications
             * @default false
             */
            pushNotifications?: boolean;
            /**
             * Statetransitionhistory
             * @default false
             */
            stateTransitionHistory?: boolean;
            /**
             * Extensions
             * @default null
             */
            extensions?: components["schemas"]["AgentExtension"][] | null;
        };
        /**
         * LegacyHttpAuth
         * @description An OpenAPI-style HTTP security scheme, as A2A 0.3 writes one.
         */
        LegacyHttpAuth: {
            /**
             * Type
             * @default http
             * @constant
             */
            type?: "http";
            /** Scheme */
            scheme: string;
            /**
             * Bearerformat
             * @default null
             */
            bearerFormat?: string | null;
            /**
             * Description
             * @default null
             */
            description?: string | null;
        };
        /** LegacyInterface */
        LegacyInterface: {
            /** Url */
            url: string;
            /** Transport */
            transport: string;
        };
        /** LineItemRequest */
        LineItemRequest: {
            item: components["schemas"]["ItemRef"];
            /**
             * Quantity
             * @default 1
             */
            quantity?: number;
            /**
             * Id
             * @default null
             */
            id?: string | null;
        };
        /** ListRequest */
        ListRequest: {
            /** Agentid */
            agentId: string;
            /** Txhash */
            txHash: string;
            /**
             * Askingpriceusdc
             * @description USDC, at most 6 decimals (a JSON number, never a string)
             */
            askingPriceUsdc: number;
            /** Acceptoffers */
            acceptOffers: boolean;
            /**
             * Selleremail
             * @default null
             */
            sellerEmail?: string | null;
        };
        /**
         * Listing
         * @description A listing as every drop answer shows it (core.marketplace.views.listing_json); one listing by
         *     listingId or agentId also has drop_offers, drop_sales and offerTypedData.
         */
        Listing: {
            /** Id */
            id: string;
            /** Chainlistingid */
            chainListingId: number;
            /** Agentid */
            agentId: string;
            /** Agentuuid */
            agentUuid: string;
            /** Tokenid */
            tokenId: number;
            /** Seller */
            seller: string;
            /**
             * Askingpriceusdc
             * @description USDC, at most 6 decimals
             */
            askingPriceUsdc: number;
            /**
             * Floorpriceusdc
             * @description USDC, at most 6 decimals
             */
            floorPriceUsdc: number;
            /**
             * Earningsatlistingusdc
             * @description USDC, at most 6 decimals
             */
            earningsAtListingUsdc: number;
            /** Acceptoffers */
            acceptOffers: boolean;
            /**
             * Status
             * @description active, settling, sold, expired, cancelled; void: undone by a reorg
             */
            status: string;
            /**
             * State
             * @deprecated
             * @description status under its old name (removed in API 2.0.0)
             */
            state: string;
            /** Agentpaused */
            agentPaused: boolean;
            /** Expiresat */
            expiresAt: string;
            /** Listtx */
            listTx: string;
            /** Final */
            final: boolean;
            /** Endtx */
            endTx: string | null;
            /** Createdat */
            createdAt: string;
            /** Updatedat */
            updatedAt: string;
        } & {
            [key: string]: unknown;
        };
        /** ListingPage */
        ListingPage: {
            /** Listings */
            listings: components["schemas"]["Listing"][];
            /** Total */
            total: number;
            /** Page */
            page: number;
            /** Pages */
            pages: number;
        } & {
            [key: string]: unknown;
        };
        /** ListingResponse */
        ListingResponse: {
            listing: components["schemas"]["Listing"];
        } & {
            [key: string]: unknown;
        };
        /** Memory */
        Memory: {
            /** Key */
            key: string;
            /**
             * Value
             * @description any JSON value, as stored
             */
            value: unknown;
            /**
             * Createdat
             * Format: date-time
             */
            createdAt: string;
            /**
             * Updatedat
             * Format: date-time
             */
            updatedAt: string;
        };
        /** MemoryListResponse */
        MemoryListResponse: {
            /** Memories */
            memories: components["schemas"]["Memory"][];
            /**
             * Nextcursor
             * @description pass as cursor for the next page; null on the last
             */
            nextCursor: string | null;
        };
        /**
         * MemoryWriteRequest
         * @description Upsert one memory key. Limits (checked by core.wallets.put_memory): key 1-256 printable
         *     ASCII, not starting with brain: or run: (400 invalid_key / reserved_key); value any JSON of at
         *     most 16 KiB as compact JSON (413 value_too_large) whose numbers lie within +-(2^53 - 1) (400
         *     invalid_number: a larger one, 2^256 or 1E+999999999, reads back rounded or infinite elsewhere);
         *     10,000 keys per agent (409 memory_full).
         */
        MemoryWriteRequest: {
            /** Agentid */
            agentId: string;
            /** Key */
            key: string;
            /** Value */
            value: components["schemas"]["JsonValue"];
        };
        /** MemoryWriteResponse */
        MemoryWriteResponse: {
            /**
             * Success
             * @constant
             */
            success: true;
            memory: components["schemas"]["Memory"];
        };
        /**
         * Methodology
         * @description Every formula: both chain rules, RFC 8785 canonicalisation, the Merkle leaf and tree.
         */
        Methodology: {
            [key: string]: unknown;
        };
        /** MintRequest */
        MintRequest: {
            /** Agentid */
            agentId: string;
            /** Owneraddress */
            ownerAddress: string;
            /** Selfwallet */
            selfWallet: string;
            /** Timestamp */
            timestamp: number;
            /** Signature */
            signature: string;
        };
        /** MintResponse */
        MintResponse: {
            /** Agentid */
            agentId: string;
            /** Tokenid */
            tokenId: number;
            /** Minttx */
            mintTx: string | null;
            /** Minted */
            minted: boolean;
        } & {
            [key: string]: unknown;
        };
        /** NetworkResponse */
        NetworkResponse: {
            /** Totalagents */
            totalAgents: number;
            /**
             * Totalearned
             * @description USDC, at most 6 decimals
             */
            totalEarned: number;
            /**
             * Totaltolls
             * @description USDC, at most 6 decimals
             */
            totalTolls: number;
        };
        /** NicheStats */
        NicheStats: {
            /** Listed */
            listed: number;
            /** Sold */
            sold: number;
            /**
             * Revenue
             * @description USDC, at most 6 decimals
             */
            revenue: number;
            /** Winrate */
            winRate: number;
        };
        /** OfferRequest */
        OfferRequest: {
            /** Listingid */
            listingId: string;
            /**
             * Offerpriceusdc
             * @description USDC, at most 6 decimals (a JSON number, never a string)
             */
            offerPriceUsdc: number;
            /** Buyeraddress */
            buyerAddress: string;
            /** Nonce */
            nonce: number;
            /** Deadline */
            deadline: number;
            /** Signature */
            signature: string;
            /**
             * Buyeremail
             * @default null
             */
            buyerEmail?: string | null;
        };
        /** OfferResponse */
        OfferResponse: {
            /** Offer */
            offer: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /**
         * OneClickForm
         * @description The RFC 8058 one-click body a mail client posts (application/x-www-form-urlencoded); the
         *     page's own form posts no field.
         */
        OneClickForm: {
            /**
             * List-Unsubscribe
             * @default One-Click
             */
            "List-Unsubscribe"?: string;
        };
        /**
         * OpenApiDocument
         * @description This document (described loosely: its own schema is OpenAPI 3.1's).
         */
        OpenApiDocument: {
            /** Openapi */
            openapi: string;
            /** Info */
            info: {
                [key: string]: unknown;
            };
            /** Paths */
            paths: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /** OrderMove */
        OrderMove: {
            /** Id */
            id: string;
            /** Status */
            status: string;
            /** From State */
            from_state: string;
            /** Audit Id */
            audit_id: number;
        };
        /** OrderResponse */
        OrderResponse: {
            /** Id */
            id: string;
            /** Status */
            status: string;
            /** Service Job Id */
            service_job_id: string;
            /** Settlement Tx Hash */
            settlement_tx_hash: string;
            audit_chain: components["schemas"]["AuditChain"];
        } & {
            [key: string]: unknown;
        };
        /**
         * Page
         * @description A page for people (text/html).
         */
        Page: string;
        /**
         * PartView
         * @description A long-lived part of the process: the group committer (writer), the indexer, the outbox
         *     dispatcher, the job leases.
         */
        PartView: {
            /**
             * State
             * @enum {string}
             */
            state: "ok" | "failing";
            /**
             * Recoveries
             * @description times it recovered after failing (a reconnection, a lease taken again)
             */
            recoveries: number;
            /** Failingforseconds */
            failingForSeconds?: number;
            /** Lasterror */
            lastError?: string;
        };
        /** PaymentData */
        PaymentData: {
            /**
             * Handler Id
             * @constant
             */
            handler_id: "service-usdc-commerce-v1";
            instrument: components["schemas"]["Instrument"];
        } & {
            [key: string]: components["schemas"]["AnyJson"];
        };
        /** PriceStats */
        PriceStats: {
            /** Listed */
            listed: number;
            /** Sold */
            sold: number;
            /**
             * Revenue
             * @description USDC, at most 6 decimals
             */
            revenue: number;
        };
        /** ProofResponse */
        ProofResponse: {
            /** Audit Id */
            audit_id: number;
            /** Leaf Index */
            leaf_index: number;
            /** Leaf Hash */
            leaf_hash: string;
            /** Tree Size */
            tree_size: number;
            /** Root */
            root: string;
            /** Proof */
            proof: string[];
            /**
             * Anchored
             * @description tree_size is an anchored checkpoint
             */
            anchored: boolean;
            anchor: components["schemas"]["CheckpointView"] | null;
        };
        /**
         * ProtectedResourceMetadata
         * @description RFC 9728 section 2 (the fields this service fills in), plus how to get a key.
         */
        ProtectedResourceMetadata: {
            /** Resource */
            resource: string;
            /** Resource Name */
            resource_name: string;
            /** Resource Documentation */
            resource_documentation: string;
            /** Bearer Methods Supported */
            bearer_methods_supported: string[];
            /** Scopes Supported */
            scopes_supported: string[];
            /** Api Key Issuance */
            api_key_issuance: string[];
        };
        /** ProviderLinkRequest */
        ProviderLinkRequest: {
            /** Agent Id */
            agent_id: string;
            /** Self Wallet */
            self_wallet: string;
            /** Owner Address */
            owner_address: string;
            /**
             * Referrer Token Id
             * @default null
             */
            referrer_token_id?: number | null;
            /** Timestamp */
            timestamp: number;
            /** Signature */
            signature: string;
        };
        /** ProviderOrder */
        ProviderOrder: {
            /** Id */
            id: string;
            /** Status */
            status: string;
            /** Service Job Id */
            service_job_id: string;
            /** Amount */
            amount: number;
            /** Deadline */
            deadline: number;
        } & {
            [key: string]: unknown;
        };
        /** ProviderOrderList */
        ProviderOrderList: {
            /** Data */
            data: components["schemas"]["ProviderOrder"][];
            /** Has More */
            has_more: boolean;
            /** Next Cursor */
            next_cursor: string | null;
        };
        /** ProviderResponse */
        ProviderResponse: {
            /** Agent Id */
            agent_id: string;
            /** Agent Uuid */
            agent_uuid: string;
            /** Self Wallet */
            self_wallet: string;
            /** Owner Address */
            owner_address: string;
            /** Token Id */
            token_id: number | null;
            /** Referrer Token Id */
            referrer_token_id: number | null;
            /** Mint Tx */
            mint_tx: string | null;
            /** Linked At */
            linked_at: string;
        } & {
            [key: string]: unknown;
        };
        /** ProviderWebhookRequest */
        ProviderWebhookRequest: {
            /**
             * Url
             * @description http(s) URL; private targets refused
             */
            url: string;
        };
        /** ProviderWebhookResponse */
        ProviderWebhookResponse: {
            /** Agent Id */
            agent_id: string;
            /** Webhook Url */
            webhook_url: string | null;
            /**
             * Webhook Secret
             * @description HMAC key of the webhooks; shown once, in the answer that set it
             * @default null
             */
            webhook_secret?: string | null;
        };
        /** RegisterRequest */
        RegisterRequest: {
            /** Name */
            name: string;
            /**
             * Specialty
             * @enum {string}
             */
            specialty: "content_seo" | "digital_products" | "prompt_packs" | "notion_templates" | "instagram" | "twitter_x" | "youtube" | "podcast" | "ghostwriting" | "linkedin" | "ecommerce" | "print_on_demand" | "data_research" | "lead_generation" | "email" | "newsletter" | "crypto_trading" | "stock_forex" | "passive" | "advertising_adsense" | "dev_products" | "sidehustle" | "licensing" | "arbitrage" | "business" | "sales" | "freelance";
            /**
             * Referralcode
             * @default null
             */
            referralCode?: string | null;
        };
        /** RegisterResponse */
        RegisterResponse: {
            /**
             * Success
             * @constant
             */
            success: true;
            agent: components["schemas"]["Agent"];
            /**
             * Api Key
             * @description only when registering without a key: the new account's key, shown once
             */
            api_key?: string;
        };
        /** RegistryEntry */
        RegistryEntry: {
            /** Wallet */
            wallet: string;
            /** Servicetype */
            serviceType: string;
            /**
             * Priceusdc
             * @description USDC, at most 6 decimals
             */
            priceUsdc: number;
            /** Reputationscore */
            reputationScore: number;
            /** Successrate */
            successRate: number | null;
            /** Avgresponsems */
            avgResponseMs: number | null;
            /** Healthy */
            healthy: boolean;
            /** Escrow */
            escrow: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /** RegistryResponse */
        RegistryResponse: {
            /** Providers */
            providers: components["schemas"]["RegistryEntry"][];
            /** Hasmore */
            hasMore: boolean;
            /** Nextcursor */
            nextCursor: string | null;
            /** Formula */
            formula: string;
        } & {
            [key: string]: unknown;
        };
        /** ReputationResponse */
        ReputationResponse: {
            /** Wallet */
            wallet: string;
            /** Servicetype */
            serviceType: string;
            /** Reputationscore */
            reputationScore: number;
            /** Samples */
            samples: {
                [key: string]: unknown;
            }[];
            /** Hasmore */
            hasMore: boolean;
            /** Nextcursor */
            nextCursor: string | null;
            /** Formula */
            formula: string;
        } & {
            [key: string]: unknown;
        };
        /** RunCounts */
        RunCounts: {
            /** Success */
            success: number;
            /** Failure */
            failure: number;
        };
        /** RunRequest */
        RunRequest: {
            /** Agentid */
            agentId: string;
            /** Success */
            success: boolean;
            /**
             * Niche
             * @default null
             */
            niche?: string | null;
        };
        /** RunResponse */
        RunResponse: {
            /**
             * Success
             * @constant
             */
            success: true;
            /**
             * Key
             * @description run:YYYY-MM-DD:<niche or general>
             */
            key: string;
            runs: components["schemas"]["RunCounts"];
        };
        /** Runner */
        Runner: {
            /**
             * Type
             * @description https: a JSON endpoint; a2a: an A2A agent
             * @enum {string}
             */
            type: "https" | "a2a";
            /**
             * Url
             * @description the HTTPS endpoint, or the A2A agent card's URL
             */
            url: string;
        };
        /** SaleResponse */
        SaleResponse: {
            /** Saleid */
            saleId: string;
            /** Noticewindowendsat */
            noticeWindowEndsAt: string;
            /** Saleprice */
            salePrice: unknown;
            /** Sellerproceeds */
            sellerProceeds: unknown;
            /** Servicefee */
            serviceFee: unknown;
        } & {
            [key: string]: unknown;
        };
        /** SecurityRequirement */
        SecurityRequirement: {
            /** Schemes */
            schemes: {
                [key: string]: components["schemas"]["StringList"];
            };
        };
        /** SecurityScheme */
        SecurityScheme: {
            httpAuthSecurityScheme: components["schemas"]["HTTPAuthSecurityScheme"];
        };
        /** ServiceListResponse */
        ServiceListResponse: {
            /** Services */
            services: components["schemas"]["ServiceResponse"][];
        } & {
            [key: string]: unknown;
        };
        /** ServicePublishRequest */
        ServicePublishRequest: {
            /**
             * Agentid
             * @description the provider agent (required with an account key)
             * @default null
             */
            agentId?: string | null;
            /**
             * Servicetype
             * @description a short token, e.g. keyword_research
             */
            serviceType: string;
            /**
             * Price
             * @description USDC per job (standard hire); escrow needs the on-chain price equal
             */
            price: number;
            /** Description */
            description: string;
            /**
             * Inputschema
             * @description JSON Schema of the job's input
             */
            inputSchema: {
                [key: string]: components["schemas"]["AnyJson"];
            };
            /**
             * Outputschema
             * @description JSON Schema the output must satisfy
             */
            outputSchema: {
                [key: string]: components["schemas"]["AnyJson"];
            };
            /**
             * Slaseconds
             * @description maximum response time
             * @default 30
             */
            slaSeconds?: number;
            runner: components["schemas"]["Runner"];
            /**
             * Webhookurl
             * @default null
             */
            webhookUrl?: string | null;
            /**
             * Webhooksecret
             * @default null
             */
            webhookSecret?: string | null;
            /**
             * Rotatesecret
             * @default false
             */
            rotateSecret?: boolean;
        };
        /** ServiceResponse */
        ServiceResponse: {
            /** Wallet */
            wallet: string;
            /** Servicetype */
            serviceType: string;
            /**
             * Priceusdc
             * @description USDC, at most 6 decimals
             */
            priceUsdc: number;
            /** Escrow */
            escrow: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /**
         * SessionCompleteRequest
         * @description Documentation of the complete body (it is validated by hand for the spec's exact error codes:
         *     core.checkout.funding.parse_payment).
         */
        SessionCompleteRequest: {
            /** @default null */
            buyer?: components["schemas"]["CompleteBuyer"] | null;
            payment_data: components["schemas"]["PaymentData"];
        } & {
            [key: string]: components["schemas"]["AnyJson"];
        };
        /** SessionCreateRequest */
        SessionCreateRequest: {
            /** Line Items */
            line_items: components["schemas"]["LineItemRequest"][];
            /** @default null */
            buyer?: components["schemas"]["BuyerRequest"] | null;
            /**
             * Webhook Url
             * @default null
             */
            webhook_url?: string | null;
            /**
             * Currency
             * @default null
             */
            currency?: string | null;
            /**
             * Capabilities
             * @default null
             */
            capabilities?: {
                [key: string]: components["schemas"]["AnyJson"];
            } | null;
        };
        /** SessionResponse */
        SessionResponse: {
            /** Id */
            id: string;
            /** Status */
            status: string;
            /** Currency */
            currency: string;
            /** Line Items */
            line_items: {
                [key: string]: unknown;
            }[];
            /** Totals */
            totals: {
                [key: string]: unknown;
            }[];
            /** Messages */
            messages: {
                [key: string]: unknown;
            }[];
        } & {
            [key: string]: unknown;
        };
        /**
         * SessionUpdateRequest
         * @description At least one of the two (400 empty_update); neither may be null.
         */
        SessionUpdateRequest: {
            /** Line Items */
            line_items?: components["schemas"]["LineItemRequest"][];
            buyer?: components["schemas"]["BuyerRequest"];
        };
        /** Signed */
        Signed: {
            /**
             * Timestamp
             * @description unix seconds; within 300 s of the server's clock
             */
            timestamp: number;
            /**
             * Signature
             * @description EIP-191 signature, 65 bytes hex
             */
            signature: string;
        };
        /** SpendRequest */
        SpendRequest: {
            /** Agentid */
            agentId: string;
            /**
             * Amount
             * @description USDC, at most 6 decimals (a JSON number, never a string)
             */
            amount: number;
            /** Destination */
            destination: string;
        };
        /** SpendResponse */
        SpendResponse: {
            /**
             * Success
             * @constant
             */
            success: true;
            /**
             * Spent
             * @description USDC, at most 6 decimals
             */
            spent: number;
            /** Destination */
            destination: string;
            /**
             * Balance
             * @description USDC, at most 6 decimals
             */
            balance: number;
            /**
             * Ownerbalance
             * @description USDC, at most 6 decimals
             */
            ownerBalance: number;
            /**
             * Agentselfbalance
             * @description USDC, at most 6 decimals
             */
            agentSelfBalance: number;
            /** Transactionid */
            transactionId: number;
        };
        /** StatementRequest */
        StatementRequest: {
            /** Agentid */
            agentId: string;
            /** Selleraddress */
            sellerAddress: string;
        };
        /** StatementResponse */
        StatementResponse: {
            /** Agentid */
            agentId: string;
            /** Statement */
            statement: {
                [key: string]: unknown;
            };
            /** Signature */
            signature: string;
            /** Reportedearningsusdc */
            reportedEarningsUsdc: unknown;
            /** Onchainearningsusdc */
            onchainEarningsUsdc: unknown;
            /** Minimumfloorusdc */
            minimumFloorUsdc: unknown;
        } & {
            [key: string]: unknown;
        };
        /** StringList */
        StringList: {
            /** List */
            list?: string[];
        };
        /** TopProduct */
        TopProduct: {
            /** Name */
            name: string;
            /** Niche */
            niche: string;
            /**
             * Price
             * @description its latest listed or sold price
             */
            price: number;
            /** Sold */
            sold: number;
        };
        /**
         * Verification
         * @description The entry, its chain inputs, shell commands, inclusion proof and anchor (see /methodology).
         */
        Verification: {
            /** Audit Id */
            audit_id: number;
            /** Stream */
            stream: string;
            /** Seq */
            seq: number;
            /** Chain Hash */
            chain_hash: string;
            /** Prev Hash */
            prev_hash: string;
            /** Inclusion */
            inclusion: {
                [key: string]: unknown;
            };
            /** Anchor */
            anchor: {
                [key: string]: unknown;
            } | null;
        } & {
            [key: string]: unknown;
        };
        /**
         * WatchRequest
         * @description Exactly one of email and webhookUrl (400 invalid_field otherwise).
         */
        WatchRequest: {
            /** Agentid */
            agentId: string;
            /**
             * Email
             * @default null
             */
            email?: string | null;
            /**
             * Webhookurl
             * @default null
             */
            webhookUrl?: string | null;
        } & ({
            email: string;
        } | {
            webhookUrl: string;
        });
        /** WatchResponse */
        WatchResponse: {
            /** Watch */
            watch: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    registerAgent: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RegisterRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RegisterResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key, invalid_specialty */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, account_key_required */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: unknown_referral_code */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, idempotency_unsupported */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    earn: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EarnRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EarnResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, balance_limit */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    spend: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SpendRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SpendResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, daily_cap_exceeded */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, insufficient_balance */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getBalance: {
        parameters: {
            query: {
                agentId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BalanceResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getIdentity: {
        parameters: {
            query: {
                agentId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IdentityResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    earnBatch: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EarnBatchRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EarnBatchResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, balance_limit */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    compound: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CompoundRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CompoundResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listMemories: {
        parameters: {
            query: {
                agentId: string;
                query?: string | null;
                limit?: number;
                cursor?: string | null;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryListResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    writeMemory: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["MemoryWriteRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryWriteResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key, invalid_key, reserved_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight, memory_full */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large, value_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getBrain: {
        parameters: {
            query: {
                agentId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BrainResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateBrain: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BrainUpdateRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BrainUpdateResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key, invalid_action, invalid_niche */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, balance_limit */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    recordRun: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RunRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RunResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key, invalid_niche */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getNetwork: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NetworkResponse"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["KeyRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["KeyResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_email */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: email_has_key */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_unsupported */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    healthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthResponse"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: chain_unavailable, chain_mismatch */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getOpenApiSchema: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OpenApiDocument"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAgentCardLegacy: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description public, max-age=3600 */
                    "Cache-Control"?: string;
                    /** @description *: any origin may read it */
                    "Access-Control-Allow-Origin"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LegacyAgentCard"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAgentCard: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description public, max-age=3600 */
                    "Cache-Control"?: string;
                    /** @description *: any origin may read it */
                    "Access-Control-Allow-Origin"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentCard"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    logDecision: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description agent_uuid */
                agent_uuid: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DecisionLogRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DecisionLogResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key, evidence_content_not_accepted, evidence_required, invalid_webhook_url */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, webhook_url_refused */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited. `code` is one of: rate_limit_exceeded */
            429: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    auditCheckpoints: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CheckpointsResponse"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    auditInclusionProof: {
        parameters: {
            query?: {
                /** @description default: the latest anchor holding the entry */
                tree_size?: number;
            };
            header?: never;
            path: {
                /** @description audit_id */
                audit_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProofResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: entry_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: invalid_tree_size */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    auditConsistencyProof: {
        parameters: {
            query: {
                first: number;
                second: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConsistencyResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: invalid_tree_size */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createCheckoutSession: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SessionCreateRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key, invalid_email, invalid_webhook_url */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: item_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, multiple_providers, provider_not_linked, amount_too_large, webhook_url_refused */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getCheckoutSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description session_id */
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key, session_key_mismatch */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: session_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updateCheckoutSession: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description session_id */
                session_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SessionUpdateRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key, invalid_email, empty_update */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key, session_key_mismatch */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: session_not_found, item_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight, session_completed, session_cancelled, session_expired, session_in_progress */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, multiple_providers, provider_not_linked, amount_too_large */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    cancelCheckoutSession: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description session_id */
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key, session_key_mismatch */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: session_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not allowed in the resource's state. `code` is one of: session_not_cancelable */
            405: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight, session_in_progress */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    completeCheckoutSession: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description session_id */
                session_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SessionCompleteRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key, missing_email, invalid_email, missing_address, invalid_address, unsupported_payment_handler, missing_payment_data, missing_payment_signature, invalid_payment_signature */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key, session_key_mismatch, payment_signature_mismatch */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, daily_cap_exceeded */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: session_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight, session_completed, session_cancelled, session_expired, session_in_progress, session_changed, provider_paused */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, insufficient_allowance, insufficient_balance */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Error. `code` is one of: funding_failed */
            502: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: order_pending, funding_unconfirmed, chain_unavailable, indexer_halted, database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getOrder: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description order_id */
                order_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OrderResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: order_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    linkProvider: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ProviderLinkRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProviderResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key, timestamp_out_of_window, signature_mismatch */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found, unknown_referrer */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight, provider_already_linked, provider_link_in_progress, self_wallet_taken */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Error. `code` is one of: mint_failed, chain_error */
            502: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: chain_unavailable, database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getProvider: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description agent_id */
                agent_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProviderResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: provider_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    setProviderWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the provider agent's agl_ wallet id */
                agent_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ProviderWebhookRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProviderWebhookResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_webhook_url */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, provider_not_linked */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteProviderWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the provider agent's agl_ wallet id */
                agent_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProviderWebhookResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, provider_not_linked */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listProviderOrders: {
        parameters: {
            query?: {
                status?: string | null;
                limit?: string | null;
                cursor?: string | null;
            };
            header?: never;
            path: {
                /** @description the provider agent's agl_ wallet id */
                agent_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProviderOrderList"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, provider_not_linked */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listItems: {
        parameters: {
            query?: {
                provider?: string | null;
                after?: string | null;
                limit?: string | null;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ItemListResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createItem: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ItemCreateRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ItemResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, provider_not_linked */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight, item_exists */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, missing_agent_id */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getItem: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description item_id */
                item_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ItemResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: item_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    acknowledgeOrder: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description order_id */
                order_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Signed"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OrderMove"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: signature_expired, invalid_signature */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: order_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: invalid_transition, signature_replayed, provider_not_linked, escrow_closed */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    startOrder: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description order_id */
                order_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Signed"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OrderMove"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: signature_expired, invalid_signature */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: order_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: invalid_transition, signature_replayed, provider_not_linked, escrow_closed */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    failOrder: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description order_id */
                order_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["FailRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OrderMove"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: signature_expired, invalid_signature */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: order_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: invalid_transition, signature_replayed, provider_not_linked, escrow_closed */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: invalid_reason */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    recoverOrder: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description order_id */
                order_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Signed"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OrderMove"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: signature_expired, invalid_signature */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: order_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: invalid_transition, signature_replayed, provider_not_linked, escrow_closed */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    uploadDeliverable: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description order_id */
                order_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DeliverableContent"];
                "multipart/form-data": components["schemas"]["DeliverableForm"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeliverableResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_content, digest_mismatch, invalid_request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: signature_expired, invalid_signature, missing_signature */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: order_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Error. `code` is one of: upload_timeout */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: invalid_transition, signature_replayed, provider_not_linked, escrow_closed, deliverable_quota, upload_in_progress */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Rate limited. `code` is one of: upload_slots_busy */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    completeOrder: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description order_id */
                order_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CompleteAttestation"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CompleteResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_cid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: signature_expired, invalid_signature */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: order_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: invalid_transition, signature_replayed, provider_not_linked, escrow_closed, deliverable_mismatch, release_refused, already_released */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: release_refused */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: chain_unavailable, internal_step_failed, indexer_halted, database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    ipfsGet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description a CIDv0 (Qm...) or a CIDv1 (base32 b..., base36 k..., base58btc z...) */
                cid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description the CIDv1 in double quotes, e.g. "bafk..." */
                    ETag?: string;
                    /** @description public, max-age=29030400, immutable */
                    "Cache-Control"?: string;
                    /** @description /ipfs/<cid as requested> */
                    "X-Ipfs-Path"?: string;
                    /** @description the CIDv1 of the content */
                    "X-Ipfs-Roots"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": components["schemas"]["IpfsContent"];
                    "application/json": components["schemas"]["IpfsJson"];
                };
            };
            /** @description Not Modified: If-None-Match names the ETag (or is *) */
            304: {
                headers: {
                    /** @description the CIDv1 in double quotes, e.g. "bafk..." */
                    ETag?: string;
                    /** @description public, max-age=29030400, immutable */
                    "Cache-Control"?: string;
                    /** @description /ipfs/<cid as requested> */
                    "X-Ipfs-Path"?: string;
                    /** @description the CIDv1 of the content */
                    "X-Ipfs-Roots"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_cid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: content_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listHireServices: {
        parameters: {
            query?: {
                agentId?: string | null;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ServiceListResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: missing_agent_id */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    publishHireService: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ServicePublishRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ServiceResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, provider_not_linked */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large, schema_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, invalid_schema, invalid_url, missing_agent_id, invalid_service_type, invalid_sla */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    withdrawHireService: {
        parameters: {
            query?: {
                agentId?: string | null;
            };
            header?: never;
            path: {
                /** @description the service type to withdraw */
                serviceType: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ServiceResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found, service_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: missing_agent_id */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    hireAgent: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["HireRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HireResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, daily_cap_exceeded */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found, service_not_found, no_provider_available */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight, provider_paused, provider_cannot_be_paid, agent_paused */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large, input_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, insufficient_balance, price_above_max, self_hire, input_schema_mismatch, invalid_input, invalid_webhook_url, missing_field, invalid_field */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Error. `code` is one of: provider_unreachable, provider_error, provider_invalid_output, provider_response_too_large, output_schema_mismatch, provider_refused_target */
            502: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: hire_interrupted, database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Error. `code` is one of: provider_timeout */
            504: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    escrowStatus: {
        parameters: {
            query: {
                jobId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EscrowStatusResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: escrow_not_deployed */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: chain_unavailable, database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    escrowHire: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EscrowRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EscrowResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: malformed_api_key, invalid_api_key, signature_expired, signature_mismatch, invalid_signature */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, daily_cap_exceeded */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: service_not_found, escrow_not_deployed */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight, signature_replayed, job_in_progress, transaction_not_found, escrow_not_locked */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large, input_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, transaction_failed, job_not_in_transaction, provider_mismatch, input_schema_mismatch, invalid_input, invalid_webhook_url, missing_field, invalid_field */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: chain_unavailable, database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    hireJobAudit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the job's id: jobId of a hire's answer (hire_...), or an escrow job's 0x id */
                jobId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HireAuditResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_job_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: job_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    hireRegistry: {
        parameters: {
            query?: {
                serviceType?: string | null;
                wallet?: string | null;
                maxPrice?: string | null;
                minScore?: string | null;
                escrow?: ("true" | "false") | null;
                healthy?: ("true" | "false") | null;
                limit?: string | null;
                cursor?: string | null;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RegistryResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: invalid_cursor, invalid_amount, invalid_field */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    hireReputation: {
        parameters: {
            query: {
                wallet: string;
                serviceType: string;
                limit?: string | null;
                cursor?: string | null;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ReputationResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: service_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: invalid_cursor */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    verifyEntry: {
        parameters: {
            query?: {
                format?: ("json" | "html") | null;
            };
            header?: never;
            path: {
                /** @description the entry's integer audit_id */
                audit_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Verification"];
                    "text/html": components["schemas"]["HtmlPage"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: entry_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    methodology: {
        parameters: {
            query?: {
                format?: ("json" | "html") | null;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Methodology"];
                    "text/html": components["schemas"]["HtmlPage"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    decisionLoggingDiscoveryLegacy: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description public, max-age=3600 */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DecisionLoggingDiscovery"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    decisionLoggingDiscovery: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description public, max-age=3600 */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DecisionLoggingDiscovery"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropBrowse: {
        parameters: {
            query?: {
                listingId?: string | null;
                agentId?: string | null;
                status?: string | null;
                /** @deprecated */
                state?: string | null;
                page?: string | null;
                perPage?: string | null;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ListingPage"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: listing_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropMint: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["MintRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MintResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key, timestamp_out_of_window, signature_mismatch */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found, unknown_referrer */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight, self_wallet_taken */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Error. `code` is one of: mint_failed, chain_error */
            502: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: chain_unavailable, database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropStatement: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["StatementRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StatementResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, not_nft_owner */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found, agent_not_minted */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: chain_unavailable, database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropList: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ListRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ListingResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, wrong_sender */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight, listing_of_other_agent */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, tx_not_found, tx_failed, listed_event_missing, wrong_agent, asking_price_mismatch, amount_too_large */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: chain_unavailable, database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropOffer: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["OfferRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OfferResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key, invalid_email */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key, offer_signature_mismatch */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: listing_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight, listing_not_active, offer_nonce_used, offer_exists */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, offer_below_floor, offers_not_accepted, seller_cannot_buy, offer_expired, insufficient_balance, insufficient_allowance */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: chain_unavailable, database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropAccept: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AcceptRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SaleResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, daily_cap_exceeded, wrong_sender */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: listing_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight, listing_settling */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, tx_not_found, tx_failed, commit_event_missing, wrong_commit_kind, amount_too_large */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: chain_unavailable, database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropCancel: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: the same key with the same body replays the stored response (with `Idempotent-Replayed: true`) for 24 hours; with another body it is a 422, while the first request is still running a 409. Scoped to the API key and the endpoint. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CancelRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    /** @description `true` when this is the stored response of an earlier request with the same key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ListingResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_idempotency_key */
            400: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, wrong_sender */
            403: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: listing_not_found */
            404: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: idempotency_in_flight, notice_window_active, listing_ended */
            409: {
                headers: {
                    /** @description seconds to wait */
                    "Retry-After"?: number;
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_conflict, tx_not_found, tx_failed, cancel_event_missing */
            422: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: chain_unavailable, database_unavailable */
            503: {
                headers: {
                    /** @description The request's Idempotency-Key, echoed when one was sent */
                    "Idempotency-Key"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropClaim: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ClaimRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClaimResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: malformed_api_key, invalid_api_key, timestamp_out_of_window, signature_mismatch */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, account_key_required, not_nft_owner */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found, nothing_to_claim */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: already_claimed */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: idempotency_unsupported */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: chain_unavailable, database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropWatch: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WatchRequest"];
            };
        };
        responses: {
            /** @description Success */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WatchResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount, invalid_email, invalid_webhook_url */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Well-formed, but refused by the current state. `code` is one of: webhook_url_refused */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropUnwatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the watch's id (wat_...) */
                watch_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Empty"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope, account_key_required */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: watch_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropAssets: {
        parameters: {
            query: {
                agentId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AssetsResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropFlagAsset: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AssetFlagRequest"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AssetsResponse"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_json, duplicate_key, invalid_string, invalid_field, missing_field, unknown_field, invalid_amount */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Missing, malformed or unknown API key (or signature). `code` is one of: missing_api_key, malformed_api_key, invalid_api_key */
            401: {
                headers: {
                    /** @description Bearer challenge */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The key's scope does not allow this. `code` is one of: insufficient_scope */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: agent_not_found, asset_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict with the resource's state. `code` is one of: agent_settling */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Request body too large. `code` is one of: payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json (charset utf-8). `code` is one of: unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropUnsubscribePage: {
        parameters: {
            query: {
                token: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Empty"];
                    "text/html": components["schemas"]["Page"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    dropUnsubscribe: {
        parameters: {
            query: {
                token: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/x-www-form-urlencoded": components["schemas"]["OneClickForm"];
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Empty"];
                    "text/html": components["schemas"]["Page"];
                };
            };
            /** @description Invalid request. `code` is one of: invalid_string, invalid_field, missing_field, unknown_field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not found (or not yours: existence is not disclosed). `code` is one of: unknown_token */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A dependency is unavailable. `code` is one of: database_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getProtectedResourceMetadata: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description public, max-age=3600 */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProtectedResourceMetadata"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getMcpProtectedResourceMetadata: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    /** @description public, max-age=3600 */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProtectedResourceMetadata"];
                };
            };
            /** @description Internal error. `code` is one of: internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
