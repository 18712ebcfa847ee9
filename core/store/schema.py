"""Schema migrations, applied in order; PRAGMA user_version counts how many have run.

Conventions: amounts are INTEGER micro-USDC (a user-chosen uint256 beyond int64, e.g. an absurd
listing price, is stored as 0x-hex TEXT: SQLite would turn a too-large decimal into a lossy
REAL); addresses are EIP-55 checksummed TEXT; hashes and ids are 0x-prefixed lowercase hex TEXT.
Projection tables carry `chain_id` and are journaled for reorg rollback (TRACKED_TABLES, core.store.reorg).
"""

from __future__ import annotations

#: Tables whose writes in unfinalized blocks are journaled for reorg rollback (core.store.reorg; each
#: backend keeps the journal its own way). Later features add their derived tables here.
TRACKED_TABLES: list[str] = [
    "agents",
    "payouts",
    "gateway_jobs",
    "escrow_jobs",
    "listings",
    "credits",
    "anchors",
]

MIGRATIONS: list[str] = [
    # 1: chain following and projections
    """
    CREATE TABLE sync_state (
        chain_id INTEGER PRIMARY KEY,
        block_number INTEGER NOT NULL,      -- last block fully applied
        block_hash TEXT NOT NULL,
        head_number INTEGER NOT NULL,       -- node head last seen
        finalized_number INTEGER NOT NULL,  -- last block considered final
        updated_at REAL NOT NULL
    );
    -- Recent (unfinalized) canonical blocks, for reorg detection; pruned below finality.
    CREATE TABLE blocks (
        chain_id INTEGER NOT NULL,
        number INTEGER NOT NULL,
        hash TEXT NOT NULL,
        parent_hash TEXT NOT NULL,
        timestamp INTEGER NOT NULL,
        PRIMARY KEY (chain_id, number)
    );
    -- Every decoded contract event, once.
    CREATE TABLE events (
        chain_id INTEGER NOT NULL,
        block_number INTEGER NOT NULL,
        block_hash TEXT NOT NULL,
        tx_hash TEXT NOT NULL,
        log_index INTEGER NOT NULL,
        contract TEXT NOT NULL,
        event TEXT NOT NULL,
        topics TEXT NOT NULL,                -- the log's topics as returned, comma-separated 0x-hex
        data TEXT NOT NULL,                  -- the log's data, 0x-hex
        UNIQUE (chain_id, tx_hash, log_index)
    );
    CREATE INDEX events_block ON events (chain_id, block_number);
    -- Undo journal of projection writes in unfinalized blocks (filled by triggers).
    CREATE TABLE reorg_undo (
        seq INTEGER PRIMARY KEY,
        block_number INTEGER NOT NULL,
        tbl TEXT NOT NULL,
        op TEXT NOT NULL,                    -- I, U or D: the write to undo
        row_id INTEGER NOT NULL,
        old TEXT                             -- JSON array of the old row (U, D)
    );
    CREATE INDEX reorg_undo_block ON reorg_undo (block_number);
    -- The block being applied; NULL outside the indexer (no journaling).
    CREATE TABLE reorg_context (id INTEGER PRIMARY KEY CHECK (id = 1), block_number INTEGER);
    INSERT INTO reorg_context VALUES (1, NULL);

    CREATE TABLE agents (
        chain_id INTEGER NOT NULL,
        token_id INTEGER NOT NULL,
        wallet_id TEXT NOT NULL,
        owner TEXT NOT NULL,
        self_wallet TEXT NOT NULL,
        referrer_token_id INTEGER,
        paused INTEGER NOT NULL DEFAULT 0,
        seller_while_paused TEXT,
        lifetime_earnings INTEGER NOT NULL DEFAULT 0,
        hire_price INTEGER NOT NULL DEFAULT 0,
        registered_block INTEGER NOT NULL,
        updated_block INTEGER NOT NULL,
        PRIMARY KEY (chain_id, token_id)
    );
    CREATE UNIQUE INDEX agents_wallet ON agents (chain_id, wallet_id);
    CREATE TABLE payouts (
        chain_id INTEGER NOT NULL,
        tx_hash TEXT NOT NULL,
        log_index INTEGER NOT NULL,
        block_number INTEGER NOT NULL,
        ref TEXT NOT NULL,
        token_id INTEGER NOT NULL,
        payer TEXT NOT NULL,
        amount INTEGER NOT NULL,
        owner_cut INTEGER NOT NULL,
        agent_cut INTEGER NOT NULL,
        service_cut INTEGER NOT NULL,
        referral_cut INTEGER NOT NULL,
        owner TEXT NOT NULL,
        self_wallet TEXT NOT NULL,
        referrer TEXT,
        PRIMARY KEY (chain_id, tx_hash, log_index)
    );
    CREATE INDEX payouts_token ON payouts (chain_id, token_id);
    CREATE TABLE gateway_jobs (
        chain_id INTEGER NOT NULL,
        job_id TEXT NOT NULL,
        buyer TEXT NOT NULL,
        provider_token_id INTEGER NOT NULL,
        amount INTEGER NOT NULL,
        deadline INTEGER NOT NULL,
        status TEXT NOT NULL,                -- funded, disputed, released, resolved, refunded
        cid TEXT,
        attested_at INTEGER,
        provider_amount INTEGER,
        buyer_amount INTEGER,
        funded_tx TEXT NOT NULL,
        funded_block INTEGER NOT NULL,
        closed_tx TEXT,
        closed_block INTEGER,
        PRIMARY KEY (chain_id, job_id)
    );
    CREATE TABLE escrow_jobs (
        chain_id INTEGER NOT NULL,
        job_id TEXT NOT NULL,
        caller TEXT NOT NULL,
        provider_token_id INTEGER NOT NULL,
        amount INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        status TEXT NOT NULL,                -- locked, released, refunded
        created_tx TEXT NOT NULL,
        created_block INTEGER NOT NULL,
        closed_tx TEXT,
        closed_block INTEGER,
        PRIMARY KEY (chain_id, job_id)
    );
    CREATE TABLE listings (
        chain_id INTEGER NOT NULL,
        listing_id INTEGER NOT NULL,
        token_id INTEGER NOT NULL,
        seller TEXT NOT NULL,
        asking_price INTEGER NOT NULL,
        floor_price INTEGER NOT NULL,
        earnings_at_listing INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        status TEXT NOT NULL,                -- listed, committed, settled, cancelled, expired
        buyer TEXT,
        price INTEGER,
        notice_ends_at INTEGER,
        via_offer INTEGER,
        offer_nonce TEXT,
        seller_amount INTEGER,
        fee INTEGER,
        listed_block INTEGER NOT NULL,
        updated_block INTEGER NOT NULL,
        PRIMARY KEY (chain_id, listing_id)
    );
    CREATE TABLE credits (
        chain_id INTEGER NOT NULL,
        contract TEXT NOT NULL,
        payee TEXT NOT NULL,
        amount INTEGER NOT NULL,
        PRIMARY KEY (chain_id, contract, payee)
    );
    CREATE TABLE anchors (
        chain_id INTEGER NOT NULL,
        idx INTEGER NOT NULL,
        tree_size INTEGER NOT NULL,
        root TEXT NOT NULL,
        anchorer TEXT NOT NULL,
        block_number INTEGER NOT NULL,
        tx_hash TEXT NOT NULL,
        PRIMARY KEY (chain_id, idx)
    );
    """,
    # 2: agent wallets (off-chain ledger), accounts, API keys, idempotency keys
    """
    CREATE TABLE accounts (
        id TEXT PRIMARY KEY,                 -- UUID
        created_at REAL NOT NULL
    );
    CREATE TABLE wallet_agents (
        uuid TEXT PRIMARY KEY,
        wallet TEXT NOT NULL UNIQUE,         -- agl_ + 12 lowercase hex
        account_id TEXT NOT NULL REFERENCES accounts (id),
        name TEXT NOT NULL,
        specialty TEXT NOT NULL,
        referral_code TEXT NOT NULL UNIQUE,  -- 8 characters
        referred_by TEXT REFERENCES wallet_agents (uuid),
        created_at REAL NOT NULL
    );
    CREATE INDEX wallet_agents_account ON wallet_agents (account_id);
    CREATE TABLE api_keys (
        key_hash TEXT PRIMARY KEY,           -- SHA-256 hex of the key; the key itself is never stored
        account_id TEXT NOT NULL REFERENCES accounts (id),
        agent_id TEXT REFERENCES wallet_agents (uuid),  -- NULL: the key acts for every agent of the account
        email TEXT UNIQUE,
        created_at REAL NOT NULL
    );
    -- The source of every balance: one row per movement, written in the same transaction as
    -- the balances row it changes.
    CREATE TABLE ledger (
        id INTEGER PRIMARY KEY,
        agent_uuid TEXT NOT NULL REFERENCES wallet_agents (uuid),
        kind TEXT NOT NULL CHECK (kind IN ('earn', 'spend', 'compound', 'referral')),
        amount INTEGER NOT NULL,             -- signed change of the balance, micro-USDC
        owner_delta INTEGER NOT NULL,        -- signed change of the owner part
        self_delta INTEGER NOT NULL,         -- signed change of the agent-self part
        balance_after INTEGER NOT NULL CHECK (balance_after >= 0),
        gross INTEGER,                       -- earn: the amount A reported
        owner_cut INTEGER,
        agent_cut INTEGER,
        service_cut INTEGER,                 -- toll, dust included
        referral_cut INTEGER,
        source TEXT,                         -- earn: source; spend: destination; referral: referred wallet
        created_at REAL NOT NULL,
        CHECK (amount = owner_delta + self_delta)
    );
    CREATE INDEX ledger_agent ON ledger (agent_uuid, id);
    CREATE TABLE balances (
        agent_uuid TEXT PRIMARY KEY REFERENCES wallet_agents (uuid),
        owner_balance INTEGER NOT NULL CHECK (owner_balance >= 0),
        self_balance INTEGER NOT NULL CHECK (self_balance >= 0),
        total_earned INTEGER NOT NULL,       -- gross earnings reported plus referral credits
        tx_count INTEGER NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE idempotency_keys (
        scope TEXT NOT NULL,                 -- caller key hash (or 'anonymous') + method + path
        idem_key TEXT NOT NULL,
        body_sha256 TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('in_flight', 'done')),
        attempt TEXT NOT NULL,               -- random token of the request holding the key
        response_status INTEGER,
        response_body BLOB,
        created_at REAL NOT NULL,
        PRIMARY KEY (scope, idem_key)
    );
    CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
    """,
    # 3: agent memory, the shared brain, the reinvested bucket
    """
    -- An agent's key-value memory (value: compact JSON text). Keys starting with brain: and run:
    -- are written by the service only.
    CREATE TABLE memories (
        agent_uuid TEXT NOT NULL REFERENCES wallet_agents (uuid),
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (agent_uuid, key)
    ) WITHOUT ROWID;
    -- The network-wide aggregate of every agent's brain updates, per niche.
    CREATE TABLE shared_brain (
        niche TEXT PRIMARY KEY,
        listed INTEGER NOT NULL,
        sold INTEGER NOT NULL,
        revenue INTEGER NOT NULL,            -- micro-USDC
        sold_price_total INTEGER NOT NULL,   -- micro-USDC, sum of sale prices
        updated_at REAL NOT NULL
    );
    -- compound moves part of the spendable balance into the reinvested bucket.
    ALTER TABLE balances ADD COLUMN reinvested INTEGER NOT NULL DEFAULT 0 CHECK (reinvested >= 0);
    ALTER TABLE ledger ADD COLUMN reinvested_delta INTEGER NOT NULL DEFAULT 0;
    """,
    # 4: the audit log and its Merkle tree, webhooks, decision-log rate limits, escrow checkout
    """
    -- One append-only audit log. id is the audit_id; the entry is leaf id - 1 of the RFC 9162 tree.
    -- stream: 'agent:<uuid>' (decision log) or 'order:<order id>'; seq counts from 1 per stream.
    CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        stream TEXT NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,                  -- decision, order_transition
        payload TEXT NOT NULL,               -- canonical JSON (RFC 8785) of the entry, as hashed
        prev_hash TEXT NOT NULL,             -- 'genesis' for a stream's first entry
        chain_hash TEXT NOT NULL,            -- lowercase hex
        leaf_hash BLOB NOT NULL,             -- RFC 9162 leaf hash of the leaf data
        created_at REAL NOT NULL,
        UNIQUE (stream, seq)
    );
    -- Hashes of the complete (power-of-two, aligned) subtrees: level 0 = leaf hashes. Written once
    -- per append, never rewritten; any root or proof reads O(log n) of these rows.
    CREATE TABLE merkle_nodes (
        level INTEGER NOT NULL,
        idx INTEGER NOT NULL,
        hash BLOB NOT NULL,
        PRIMARY KEY (level, idx)
    ) WITHOUT ROWID;
    -- Transactional outbox of webhook deliveries (written with the change that caused them).
    CREATE TABLE webhook_deliveries (
        id INTEGER PRIMARY KEY,
        event_id TEXT NOT NULL UNIQUE,       -- stable across retries (webhook-id header)
        event TEXT NOT NULL,                 -- job.state_changed, decision_logged
        source TEXT NOT NULL,                -- order:<id> or audit:<id>
        url TEXT NOT NULL,
        secret TEXT NOT NULL,                -- HMAC key; cleared once delivered
        body BLOB NOT NULL,                  -- the exact bytes signed and sent
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead_letter')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at REAL NOT NULL,
        last_status INTEGER,
        last_error TEXT,
        created_at REAL NOT NULL,
        delivered_at REAL
    );
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
    CREATE INDEX webhook_deliveries_source ON webhook_deliveries (source);
    -- Decision-log rate limit: events per API key per fixed UTC-hour window.
    CREATE TABLE rate_windows (
        key_hash TEXT NOT NULL,
        window_start INTEGER NOT NULL,       -- unix seconds of the top of the hour
        count INTEGER NOT NULL,
        PRIMARY KEY (key_hash, window_start)
    ) WITHOUT ROWID;

    -- Escrow checkout. A provider is a wallet agent linked to a self wallet and an agent NFT.
    CREATE TABLE providers (
        agent_uuid TEXT PRIMARY KEY REFERENCES wallet_agents (uuid),
        self_wallet TEXT NOT NULL UNIQUE,    -- EIP-55; signs provider calls
        owner_address TEXT NOT NULL,         -- receives the owner share on-chain
        token_id INTEGER UNIQUE,             -- agent NFT id (set once the mint is mined)
        mint_tx TEXT,
        referrer_token_id INTEGER,
        linked_at REAL NOT NULL
    );
    CREATE TABLE catalogue_items (
        item_id TEXT PRIMARY KEY,
        provider_uuid TEXT NOT NULL REFERENCES providers (agent_uuid),
        title TEXT NOT NULL,
        tier TEXT NOT NULL CHECK (tier IN ('standard', 'rush', 'deep')),
        price INTEGER NOT NULL CHECK (price > 0),  -- micro-USDC per unit
        created_at REAL NOT NULL
    );
    CREATE INDEX catalogue_items_provider ON catalogue_items (provider_uuid);
    CREATE TABLE checkout_sessions (
        id TEXT PRIMARY KEY,
        key_hash TEXT NOT NULL,              -- the buyer's API key (only it may act on the session)
        status TEXT NOT NULL CHECK (status IN
            ('incomplete', 'complete_in_progress', 'completed', 'cancelled', 'expired')),
        line_items TEXT NOT NULL,            -- JSON
        buyer TEXT NOT NULL,                 -- JSON {email, first_name?}
        provider_uuid TEXT NOT NULL,
        total INTEGER NOT NULL,              -- micro-USDC
        webhook_url TEXT,
        webhook_secret TEXT,
        job_id TEXT UNIQUE,                  -- gateway job id (0x + 64 hex), fixed when completing starts
        buyer_address TEXT,
        funding_tx TEXT,
        order_id TEXT,
        expires_at REAL NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX checkout_sessions_expiry ON checkout_sessions (status, expires_at);
    CREATE TABLE orders (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL UNIQUE REFERENCES checkout_sessions (id),
        job_id TEXT NOT NULL UNIQUE,
        provider_uuid TEXT NOT NULL REFERENCES providers (agent_uuid),
        provider_token_id INTEGER NOT NULL,
        buyer_address TEXT NOT NULL,
        amount INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN
            ('created', 'acknowledged', 'in_progress', 'completed', 'released', 'failed', 'disputed')),
        deadline INTEGER NOT NULL,           -- unix seconds, on-chain
        funding_tx TEXT NOT NULL,
        deliverable_cid TEXT,
        attested_at INTEGER,
        attestation TEXT,                    -- the provider's completion signature (0x hex)
        release_submitted_tx TEXT,           -- our release transaction, once sent
        release_tx TEXT,                     -- the JobReleased event's transaction, once final
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE order_history (
        order_id TEXT NOT NULL REFERENCES orders (id),
        seq INTEGER NOT NULL,
        from_state TEXT,
        to_state TEXT NOT NULL,
        actor TEXT NOT NULL,                 -- buyer, provider, operator, chain
        reason TEXT,
        tx_hash TEXT,
        audit_id INTEGER NOT NULL REFERENCES audit_log (id),
        at REAL NOT NULL,
        PRIMARY KEY (order_id, seq)
    ) WITHOUT ROWID;
    -- Replay guard for provider signatures: a signed message is accepted once.
    CREATE TABLE used_signatures (
        digest TEXT PRIMARY KEY,             -- keccak of the EIP-191 message
        expires_at REAL NOT NULL
    ) WITHOUT ROWID;
    -- Stored deliverables, addressed by CID.
    CREATE TABLE ipfs_objects (
        cid TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        content BLOB NOT NULL,
        pinned INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL
    ) WITHOUT ROWID;
    -- How far a reader of final chain events (e.g. the order follower) has got.
    CREATE TABLE event_cursors (
        name TEXT NOT NULL,
        chain_id INTEGER NOT NULL,
        block_number INTEGER NOT NULL,
        log_index INTEGER NOT NULL,
        PRIMARY KEY (name, chain_id)
    );
    """,
    # 5: lookups by token or job alone (one database follows one chain; the primary keys lead with
    # chain_id): the provider's current self wallet, an order's escrow status, settled earnings
    """
    CREATE INDEX agents_token ON agents (token_id);
    CREATE INDEX gateway_jobs_job ON gateway_jobs (job_id);
    CREATE INDEX payouts_token_only ON payouts (token_id);
    """,
    # 6: events and payouts keyed by their place in the chain, (chain, block, log index): a backfilled
    # row appends at the end of that index, where the old unique key led with the random tx hash and
    # put each insert on a random page (about two thirds of a backfill's SQLite time). A table holds
    # one canonical chain (a reorg deletes what was above the common ancestor before the new branch is
    # written) and a log index counts within its block, so (chain, tx hash, log index) stays unique
    # without an index of its own. payouts_token (chain, token) gave way to payouts_token_only.
    """
    CREATE TABLE events_v6 (
        chain_id INTEGER NOT NULL,
        block_number INTEGER NOT NULL,
        block_hash TEXT NOT NULL,
        tx_hash TEXT NOT NULL,
        log_index INTEGER NOT NULL,
        contract TEXT NOT NULL,
        event TEXT NOT NULL,
        topics TEXT NOT NULL,                -- the log's topics as returned, comma-separated 0x-hex
        data TEXT NOT NULL,                  -- the log's data, 0x-hex
        UNIQUE (chain_id, block_number, log_index)
    );
    INSERT INTO events_v6 SELECT * FROM events;
    DROP TABLE events;
    ALTER TABLE events_v6 RENAME TO events;
    CREATE TABLE payouts_v6 (
        chain_id INTEGER NOT NULL,
        tx_hash TEXT NOT NULL,
        log_index INTEGER NOT NULL,
        block_number INTEGER NOT NULL,
        ref TEXT NOT NULL,
        token_id INTEGER NOT NULL,
        payer TEXT NOT NULL,
        amount INTEGER NOT NULL,
        owner_cut INTEGER NOT NULL,
        agent_cut INTEGER NOT NULL,
        service_cut INTEGER NOT NULL,
        referral_cut INTEGER NOT NULL,
        owner TEXT NOT NULL,
        self_wallet TEXT NOT NULL,
        referrer TEXT,
        UNIQUE (chain_id, block_number, log_index)
    );
    -- the same rowids: the reorg journal names payout rows by rowid
    INSERT INTO payouts_v6 (rowid, chain_id, tx_hash, log_index, block_number, ref, token_id, payer, amount,
        owner_cut, agent_cut, service_cut, referral_cut, owner, self_wallet, referrer)
    SELECT rowid, chain_id, tx_hash, log_index, block_number, ref, token_id, payer, amount,
        owner_cut, agent_cut, service_cut, referral_cut, owner, self_wallet, referrer FROM payouts;
    DROP TABLE payouts;
    ALTER TABLE payouts_v6 RENAME TO payouts;
    CREATE INDEX payouts_token_only ON payouts (token_id);
    """,
    # 7: the webhook dispatcher's per-host circuit breaker holds a down host's pending deliveries back
    # (next_attempt_at moved to the cool-down's end, attempts unchanged); held_since is when it first
    # held this row, so no row is held longer than the retry schedule (then it is a dead letter). host is
    # core.store.webhooks.host_of(url), set at enqueue, so a hold is one indexed range of one host's rows
    # (rows queued before schema 7 have none: they are attempted on their own schedule, never held).
    """
    ALTER TABLE webhook_deliveries ADD COLUMN held_since REAL;
    ALTER TABLE webhook_deliveries ADD COLUMN host TEXT;
    CREATE INDEX webhook_deliveries_host ON webhook_deliveries (host, status, next_attempt_at);
    """,
    # 8: a provider may upload at most MAX_DELIVERABLE_UPLOADS deliverables per order (each up to 32 MiB
    # is kept by CID: without a count, one order could fill the disk); expired provider signatures are
    # pruned by an index range instead of a scan on every provider call.
    """
    ALTER TABLE orders ADD COLUMN deliverable_uploads INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX used_signatures_expiry ON used_signatures (expires_at);
    """,
    # 9: one outbox for every channel (webhook now, e-mail next): the delivery table is renamed and each
    # row names its channel; `url` is the channel's target (an https URL, a mailto: address) and `host`
    # the breaker's key. job_runs records each background job's runs (core.jobs), so a restart resumes
    # the schedule instead of repeating or skipping a step.
    """
    ALTER TABLE webhook_deliveries RENAME TO outbox;
    ALTER TABLE outbox ADD COLUMN channel TEXT NOT NULL DEFAULT 'webhook';
    DROP INDEX webhook_deliveries_due;
    DROP INDEX webhook_deliveries_source;
    DROP INDEX webhook_deliveries_host;
    CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
    CREATE INDEX outbox_source ON outbox (source);
    CREATE INDEX outbox_host ON outbox (host, status, next_attempt_at);
    CREATE TABLE job_runs (
        name TEXT PRIMARY KEY,
        runs INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        last_started REAL,
        last_finished REAL,
        last_error TEXT
    ) WITHOUT ROWID;
    """,
    # 10: AgentEscrow's PriceSet carries the provider's SLA (seconds a hire may take; a job expires SLA +
    # SETTLEMENT_GRACE after creation and is then refundable by anyone): agents.hire_sla, 0 when not for
    # hire. (agents.self_wallet holds the zero address while AgentRegistry has reset it after a change of
    # hands: SelfWalletChanged(token, previous, 0x0); nothing signs for such an agent.)
    """
    ALTER TABLE agents ADD COLUMN hire_sla INTEGER NOT NULL DEFAULT 0;
    """,
    # The ownership marketplace ("drop", core/marketplace): the service's listings (UUIDs) over the
    # on-chain ones, the offer book (buyers' EIP-712 offers), sales with their due-diligence bundle,
    # watches (stakers' e-mail or webhook), e-mail recipients (unsubscribe tokens), the sweeps' sent
    # transactions (persisted before sending: a restart reconciles them instead of sending again), the
    # handover at settlement, the assets' transferred_with_nft flags. auth_epoch counts changes of who
    # controls an agent (a handover, a claim): every process's auth cache drops its agents when it moves.
    # The ledger gains the kind 'transfer' (a balance moved between two wallets: the seller's pre-sale
    # balance to its own wallet at a handover); SQLite cannot alter a CHECK, so the table is rebuilt.
    """
    CREATE TABLE drop_listings (
        id TEXT PRIMARY KEY,                 -- UUID: the API's listingId
        chain_listing_id INTEGER NOT NULL UNIQUE,  -- AgentMarketplace's listing id
        agent_uuid TEXT NOT NULL REFERENCES wallet_agents (uuid),
        token_id INTEGER NOT NULL,
        seller_account TEXT NOT NULL,        -- the account that controlled the agent at listing
        seller_address TEXT NOT NULL,        -- EIP-55: the on-chain seller (sender of list)
        asking_price INTEGER NOT NULL,       -- micro-USDC
        floor_price INTEGER NOT NULL,        -- micro-USDC, frozen at listing (the contract's)
        earnings_at_listing INTEGER NOT NULL,-- lifetime earnings the service knew at listing
        accept_offers INTEGER NOT NULL,      -- 1: offers below the asking price are taken
        seller_email TEXT,
        state TEXT NOT NULL CHECK (state IN ('active', 'settling', 'sold', 'expired', 'cancelled', 'void')),
        expires_at INTEGER NOT NULL,         -- chain time (unix s)
        list_tx TEXT NOT NULL UNIQUE,
        list_block INTEGER NOT NULL,
        confirmed INTEGER NOT NULL DEFAULT 0,-- its Listed event is final
        end_tx TEXT,                         -- the transaction that ended it (cancel, expire, settle)
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX drop_listings_agent ON drop_listings (agent_uuid, created_at);
    -- browsing a state newest first: the page's ids straight from the index (no sort), then their rows
    CREATE INDEX drop_listings_page ON drop_listings (state, created_at DESC, id);
    CREATE TABLE drop_offers (
        id TEXT PRIMARY KEY,
        listing_id TEXT NOT NULL REFERENCES drop_listings (id),
        buyer_address TEXT NOT NULL,         -- EIP-55
        price INTEGER NOT NULL,
        nonce TEXT NOT NULL,                 -- uint256, decimal
        deadline INTEGER NOT NULL,           -- chain time (unix s)
        signature TEXT NOT NULL,             -- the buyer's EIP-712 signature of the contract's Offer
        buyer_email TEXT,
        buyer_account TEXT NOT NULL,         -- the account whose key posted it
        state TEXT NOT NULL CHECK (state IN ('open', 'accepted', 'nonce_used', 'cancelled', 'closed')),
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        UNIQUE (listing_id, buyer_address, nonce)
    );
    CREATE INDEX drop_offers_nonce ON drop_offers (buyer_address, nonce);
    CREATE TABLE drop_sales (
        id TEXT PRIMARY KEY,                 -- UUID: saleId
        listing_id TEXT NOT NULL REFERENCES drop_listings (id),
        buyer_address TEXT NOT NULL,
        price INTEGER NOT NULL,
        seller_proceeds INTEGER NOT NULL,
        service_fee INTEGER NOT NULL,
        via_offer INTEGER NOT NULL,
        offer_id TEXT,
        buyer_email TEXT,
        buyer_account TEXT,
        commit_tx TEXT NOT NULL,
        commit_block INTEGER NOT NULL,
        notice_ends_at INTEGER NOT NULL,     -- chain time
        state TEXT NOT NULL CHECK (state IN ('committed', 'settled', 'reorged')),
        confirmed INTEGER NOT NULL DEFAULT 0,-- its SaleCommitted event is final
        bundle TEXT NOT NULL,                -- the due-diligence bundle, RFC 8785 JSON
        bundle_sha256 TEXT NOT NULL,
        bundle_audit_id INTEGER NOT NULL REFERENCES audit_log (id),
        settle_tx TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE UNIQUE INDEX drop_sales_live ON drop_sales (listing_id) WHERE state != 'reorged';
    CREATE INDEX drop_sales_tx ON drop_sales (commit_tx);
    CREATE TABLE drop_watches (
        id TEXT PRIMARY KEY,
        agent_uuid TEXT NOT NULL REFERENCES wallet_agents (uuid),
        account_id TEXT NOT NULL,            -- whose key created it (and may delete it)
        email TEXT,
        webhook_url TEXT,
        webhook_secret TEXT,
        created_at REAL NOT NULL,
        CHECK ((email IS NULL) != (webhook_url IS NULL))
    );
    CREATE INDEX drop_watches_agent ON drop_watches (agent_uuid);
    CREATE TABLE email_recipients (
        email TEXT PRIMARY KEY,              -- lower case
        token TEXT NOT NULL UNIQUE,          -- the unsubscribe link's token
        unsubscribed_at REAL,
        created_at REAL NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE drop_sweep_txs (
        id INTEGER PRIMARY KEY,
        action TEXT NOT NULL CHECK (action IN ('settle', 'expire')),
        chain_listing_id INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('sent', 'mined', 'reverted', 'dropped')),
        tx_hash TEXT NOT NULL UNIQUE,
        nonce INTEGER NOT NULL,
        error TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE UNIQUE INDEX drop_sweep_txs_open ON drop_sweep_txs (action, chain_listing_id) WHERE state = 'sent';
    CREATE TABLE drop_sweep_backoff (
        action TEXT NOT NULL,
        chain_listing_id INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        next_attempt_at REAL NOT NULL,
        last_error TEXT,
        PRIMARY KEY (action, chain_listing_id)
    ) WITHOUT ROWID;
    CREATE TABLE drop_handovers (
        listing_id TEXT PRIMARY KEY REFERENCES drop_listings (id),
        agent_uuid TEXT NOT NULL REFERENCES wallet_agents (uuid),
        seller_account TEXT NOT NULL,
        holding_account TEXT NOT NULL,       -- holds the agent (no key) until the buyer claims it
        estate_agent_uuid TEXT,              -- the seller's wallet that got the pre-sale balance
        moved_owner INTEGER NOT NULL,
        moved_self INTEGER NOT NULL,
        moved_reinvested INTEGER NOT NULL,
        buyer_address TEXT NOT NULL,
        settle_tx TEXT NOT NULL,
        claimed_by TEXT,                     -- the NFT owner that signed the claim
        claimed_account TEXT,
        claimed_at REAL,
        created_at REAL NOT NULL
    );
    CREATE INDEX drop_handovers_agent ON drop_handovers (agent_uuid, created_at);
    CREATE TABLE drop_assets (
        origin_agent TEXT NOT NULL,          -- the agent that produced it
        cid TEXT NOT NULL,
        holder_agent TEXT NOT NULL,          -- who holds it now (an estate wallet when retained at a sale)
        transferred_with_nft INTEGER NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (origin_agent, cid)
    ) WITHOUT ROWID;
    CREATE INDEX drop_assets_holder ON drop_assets (holder_agent);
    CREATE INDEX agents_wallet_only ON agents (wallet_id);
    CREATE TABLE auth_epoch (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
    INSERT INTO auth_epoch VALUES (1, 0);
    CREATE TABLE ledger_v11 (
        id INTEGER PRIMARY KEY,
        agent_uuid TEXT NOT NULL REFERENCES wallet_agents (uuid),
        kind TEXT NOT NULL CHECK (kind IN ('earn', 'spend', 'compound', 'referral', 'transfer')),
        amount INTEGER NOT NULL,
        owner_delta INTEGER NOT NULL,
        self_delta INTEGER NOT NULL,
        balance_after INTEGER NOT NULL CHECK (balance_after >= 0),
        gross INTEGER,
        owner_cut INTEGER,
        agent_cut INTEGER,
        service_cut INTEGER,
        referral_cut INTEGER,
        source TEXT,                         -- earn: source; spend: destination; referral: referred wallet;
                                             -- transfer: the other wallet and why
        created_at REAL NOT NULL,
        reinvested_delta INTEGER NOT NULL DEFAULT 0,
        CHECK (amount = owner_delta + self_delta)
    );
    INSERT INTO ledger_v11 (id, agent_uuid, kind, amount, owner_delta, self_delta, balance_after, gross, owner_cut,
        agent_cut, service_cut, referral_cut, source, created_at, reinvested_delta)
    SELECT id, agent_uuid, kind, amount, owner_delta, self_delta, balance_after, gross, owner_cut,
        agent_cut, service_cut, referral_cut, source, created_at, reinvested_delta FROM ledger;
    DROP TABLE ledger;
    ALTER TABLE ledger_v11 RENAME TO ledger;
    CREATE INDEX ledger_agent ON ledger (agent_uuid, id);
    """,
    # API keys limited for least privilege (HTTP and MCP alike): `scopes` is a space-separated subset of
    # read log spend admin (NULL: every scope, as every key issued before), `daily_cap` the micro-USDC a
    # key may move per UTC day (NULL: no cap). spend_holds holds what each value-moving call of a capped
    # key has reserved of its day (core.spend_caps); mcp_quotes the quotes of the MCP server's two-step
    # value-moving tools (core.quotes): what will move, to whom, for which key, until when.
    """
    ALTER TABLE api_keys ADD COLUMN scopes TEXT;
    ALTER TABLE api_keys ADD COLUMN daily_cap INTEGER;
    CREATE TABLE spend_holds (
        key_hash TEXT NOT NULL,
        ref TEXT NOT NULL,                   -- the call's Idempotency-Key scope and key (a retry holds once)
        day TEXT NOT NULL,                   -- UTC date, YYYY-MM-DD
        amount INTEGER NOT NULL CHECK (amount >= 0),
        PRIMARY KEY (key_hash, ref)
    ) WITHOUT ROWID;
    CREATE INDEX spend_holds_day ON spend_holds (key_hash, day);
    CREATE TABLE mcp_quotes (
        id TEXT PRIMARY KEY,                 -- q_ + 32 hex
        key_hash TEXT NOT NULL,              -- the key that asked for it; only it may execute it
        operation TEXT NOT NULL,             -- the operation id it executes
        arguments TEXT NOT NULL,             -- the tool arguments, canonical JSON
        amount INTEGER NOT NULL,             -- micro-USDC that will move
        summary TEXT NOT NULL,               -- JSON: from, to, what
        created_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        executed_at REAL                     -- first execute; later ones replay its answer
    );
    CREATE INDEX mcp_quotes_expiry ON mcp_quotes (expires_at);
    """,
    # A provider registers a webhook URL (its secret shown once) and is told of each new
    # order and every later move of its orders; it lists its orders, newest first (rowid order, by provider).
    """
    ALTER TABLE providers ADD COLUMN webhook_url TEXT;
    ALTER TABLE providers ADD COLUMN webhook_secret TEXT;
    CREATE INDEX orders_provider ON orders (provider_uuid);
    """,
    # A fork below finality halts the indexer until an operator acts; the halt (its reason
    # and time) is kept with the checkpoint so that every process sharing the file (an API whose indexer
    # runs apart) sees it, and a restarted indexer stays halted.
    """
    ALTER TABLE sync_state ADD COLUMN halted TEXT;
    ALTER TABLE sync_state ADD COLUMN halted_at REAL;
    """,
    # An order recorded from a receipt that was not final yet (the API's funding, the
    # provider's release) remembers the receipt's block and stays "unsettled" until the order follower sees
    # the event final; once that block is final without the event, the reconciliation rule of
    # core.checkout.follower moves the order (funding gone: failed; release gone: back to in_progress).
    """
    ALTER TABLE orders ADD COLUMN funding_block INTEGER;
    ALTER TABLE orders ADD COLUMN funding_settled INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE orders ADD COLUMN release_block INTEGER;
    ALTER TABLE orders ADD COLUMN release_settled INTEGER NOT NULL DEFAULT 1;
    CREATE INDEX orders_unsettled_funding ON orders (funding_block) WHERE funding_settled = 0;
    CREATE INDEX orders_unsettled_release ON orders (release_block) WHERE release_settled = 0;
    """,
    # An Idempotency-Key claim and a checkout session being completed name the process that
    # holds them (core.instance), so a restart frees what a crashed process held at once instead of after the
    # claim's 300 s or the session's 10 min.
    """
    ALTER TABLE idempotency_keys ADD COLUMN owner TEXT;
    ALTER TABLE checkout_sessions ADD COLUMN completing_owner TEXT;
    """,
    # The dashboard. api_keys.operator: a key the operator issued with `scripts.issue_key --operator`
    # opens the service-wide operator's view (core.dashboard.access.require_operator; a power apart from
    # the key scope 'admin', which manages the key's own account);
    # api_keys.revoked_at: a revoked key authenticates nothing (the row stays, for the operator's list).
    # dashboard_sessions: a signed-in browser, found by the SHA-256 of its cookie (the cookie itself is
    # never stored), bound to the key it signed in with and to its CSRF token; expired rows are pruned
    # at each sign-in through the expiry index. Three indexes for the dashboard's reads.
    """
    ALTER TABLE api_keys ADD COLUMN operator INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE api_keys ADD COLUMN revoked_at REAL;
    CREATE TABLE dashboard_sessions (
        token_hash TEXT PRIMARY KEY,         -- SHA-256 hex of the session cookie's value
        key_hash TEXT NOT NULL,              -- the API key it signed in with
        csrf TEXT NOT NULL,                  -- the token every form of the session carries
        created_at REAL NOT NULL,
        expires_at REAL NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
    CREATE INDEX dashboard_sessions_key ON dashboard_sessions (key_hash);
    -- what a dashboard reads on every live update: an account's keys, the sessions they funded, the
    -- orders its agents sell (each was a scan of its table)
    CREATE INDEX api_keys_account ON api_keys (account_id);
    CREATE INDEX checkout_sessions_key ON checkout_sessions (key_hash);
    -- (orders_provider, on provider_uuid alone, serves the provider's order list by rowid; this one the
    -- dashboard's latest-first read)
    CREATE INDEX orders_provider_updated ON orders (provider_uuid, updated_at);
    """,
    # Agent-to-agent hire (core/hire). The ledger gains two kinds: hire_reserve (a standard hire's
    # reservation: the amount leaves the caller's spendable balance while the job runs, so no spend and no
    # other hire can use it; a charged hire keeps it as the charge) and hire_release (the reservation given
    # back: the job failed or was cut off). SQLite cannot widen a CHECK: the ledger is rebuilt with the same
    # ids, columns and kinds (the marketplace's 'transfer' included). hire_services: what providers
    # publish, with the registry's reputation figures beside each service (the registry is one indexed
    # query); hire_jobs: every hire, standard or escrow; hire_samples: the reputation's evidence, one per
    # paid, settled job, each naming its audit entry.
    """
    CREATE TABLE ledger_rebuild (
        id INTEGER PRIMARY KEY,
        agent_uuid TEXT NOT NULL REFERENCES wallet_agents (uuid),
        kind TEXT NOT NULL CHECK (kind IN ('earn', 'spend', 'compound', 'referral', 'transfer', 'hire_reserve',
            'hire_release')),
        amount INTEGER NOT NULL,
        owner_delta INTEGER NOT NULL,
        self_delta INTEGER NOT NULL,
        balance_after INTEGER NOT NULL CHECK (balance_after >= 0),
        gross INTEGER,
        owner_cut INTEGER,
        agent_cut INTEGER,
        service_cut INTEGER,
        referral_cut INTEGER,
        source TEXT,                         -- earn: source; spend: destination; referral: referred wallet;
                                             -- transfer: the other wallet and why
        created_at REAL NOT NULL,
        reinvested_delta INTEGER NOT NULL DEFAULT 0,
        CHECK (amount = owner_delta + self_delta)
    );
    INSERT INTO ledger_rebuild (id, agent_uuid, kind, amount, owner_delta, self_delta, balance_after, gross, owner_cut,
        agent_cut, service_cut, referral_cut, source, created_at, reinvested_delta)
    SELECT id, agent_uuid, kind, amount, owner_delta, self_delta, balance_after, gross, owner_cut,
        agent_cut, service_cut, referral_cut, source, created_at, reinvested_delta FROM ledger;
    DROP TABLE ledger;
    ALTER TABLE ledger_rebuild RENAME TO ledger;
    CREATE INDEX ledger_agent ON ledger (agent_uuid, id);

    CREATE TABLE hire_services (
        provider_uuid TEXT NOT NULL REFERENCES wallet_agents (uuid),
        service_type TEXT NOT NULL,          -- a short token: [a-z0-9_]{1,40}
        wallet TEXT NOT NULL,                -- the provider's agl_ wallet (registry order, ties)
        token_id INTEGER NOT NULL,           -- its agent NFT (paused flag, on-chain price and SLA)
        price INTEGER NOT NULL CHECK (price > 0),  -- micro-USDC per job
        description TEXT NOT NULL,
        input_schema TEXT NOT NULL,          -- JSON Schema (JSON text)
        output_schema TEXT NOT NULL,
        sla_seconds INTEGER NOT NULL,        -- maximum response time: the runner's timeout
        runner TEXT NOT NULL CHECK (runner IN ('https', 'a2a')),
        endpoint TEXT NOT NULL,              -- the HTTPS endpoint, or the A2A agent card URL
        signing_secret TEXT NOT NULL,        -- HMAC key of the runner's Standard Webhooks signature
        webhook_url TEXT,                    -- the provider's job notifications
        webhook_secret TEXT,
        active INTEGER NOT NULL DEFAULT 1,
        consecutive_failures INTEGER NOT NULL DEFAULT 0,  -- health: failed runs and probes in a row
        last_checked_at REAL,
        last_error TEXT,
        jobs INTEGER NOT NULL DEFAULT 0,     -- reputation (core.hire.reputation), from hire_samples
        successes INTEGER NOT NULL DEFAULT 0,
        score REAL NOT NULL DEFAULT 0,
        success_rate REAL,
        avg_ms INTEGER,
        p95_ms INTEGER,
        last_active_at REAL,
        score_at REAL,                       -- when the figures (and the weighted sums) were last computed
        w_jobs REAL NOT NULL DEFAULT 0,      -- recency-weighted sample count as of score_at
        w_successes REAL NOT NULL DEFAULT 0,
        ok_ms_total INTEGER NOT NULL DEFAULT 0,  -- response times of the successes, summed
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (provider_uuid, service_type),
        UNIQUE (wallet, service_type)
    );
    CREATE INDEX hire_services_type_score ON hire_services (service_type, score DESC, wallet);
    CREATE INDEX hire_services_score ON hire_services (score DESC, wallet, service_type);
    CREATE INDEX hire_services_checked ON hire_services (active, last_checked_at);
    CREATE TABLE hire_jobs (
        id TEXT PRIMARY KEY,                 -- hire_ + 24 hex (standard) or the escrow job id (0x + 64 hex)
        kind TEXT NOT NULL CHECK (kind IN ('standard', 'escrow')),
        status TEXT NOT NULL CHECK (status IN
            ('reserved', 'charged', 'released', 'running', 'releasing', 'refunding', 'refunded')),
        provider_uuid TEXT NOT NULL,
        provider_token_id INTEGER NOT NULL,
        service_type TEXT NOT NULL,
        caller_uuid TEXT,                    -- standard: the paying agent
        caller_address TEXT,                 -- escrow: the on-chain caller (EIP-55)
        self_dealing INTEGER NOT NULL DEFAULT 0,  -- caller and provider under one control: no reputation
        amount INTEGER NOT NULL,
        held_owner INTEGER,                  -- standard: the reservation's owner and self parts
        held_self INTEGER,
        input_sha256 TEXT NOT NULL,
        idem_scope TEXT,                     -- standard: the Idempotency-Key that runs it
        idem_key TEXT,
        idem_attempt TEXT,                   -- the claim's attempt token (a restart finishes the key with it)
        outcome TEXT,                        -- success, failure, interrupted, refused (what the run gave)
        output TEXT,                         -- RFC 8785 JSON of the output (the bytes hashed)
        output_sha256 TEXT,
        output_cid TEXT,
        error_code TEXT,
        error_message TEXT,
        response_ms INTEGER,
        created_tx TEXT,                     -- escrow: the createJob transaction
        expires_at INTEGER,                  -- escrow: when anyone may reclaim it
        settle_tx TEXT,                      -- escrow: our release or refund (or the closing event's) transaction
        settle_attempts INTEGER NOT NULL DEFAULT 0,
        settle_error TEXT,
        next_settle_at REAL,
        final INTEGER NOT NULL DEFAULT 0,    -- escrow: its closing event is final on-chain
        caller_webhook_url TEXT,
        caller_webhook_secret TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE UNIQUE INDEX hire_jobs_idem ON hire_jobs (idem_scope, idem_key) WHERE status = 'reserved';
    CREATE INDEX hire_jobs_status ON hire_jobs (status, next_settle_at);
    CREATE INDEX hire_jobs_caller ON hire_jobs (caller_uuid);
    CREATE TABLE hire_samples (
        job_id TEXT PRIMARY KEY,
        provider_uuid TEXT NOT NULL,
        service_type TEXT NOT NULL,
        success INTEGER NOT NULL,
        response_ms INTEGER NOT NULL,
        audit_id INTEGER NOT NULL REFERENCES audit_log (id),
        settled_at REAL NOT NULL
    );
    CREATE INDEX hire_samples_service ON hire_samples (provider_uuid, service_type, settled_at);
    CREATE INDEX escrow_jobs_job ON escrow_jobs (job_id);
    CREATE INDEX hire_services_token ON hire_services (token_id);
    CREATE INDEX agents_for_hire ON agents (hire_price) WHERE hire_price > 0;
    """,
    # The dashboard's hires panel: an agent's latest hires as caller and as provider, newest first, each
    # one walk of an index (the caller index it replaces served only the caller's equality).
    """
    DROP INDEX hire_jobs_caller;
    CREATE INDEX hire_jobs_caller ON hire_jobs (caller_uuid, created_at);
    CREATE INDEX hire_jobs_provider ON hire_jobs (provider_uuid, created_at);
    """,
    # Provider-produced content an MCP execute answered (a hire's `output`), kept with its
    # quote so the key that executed it reads it as a resource (core.quotes.content) and a tool result
    # carries a link instead of the text; JSON {field: text}, written once.
    """
    ALTER TABLE mcp_quotes ADD COLUMN content TEXT;
    """,
    # Several API processes on one database: hire_jobs.owner, the process running the job
    # (core.instance id, set when it starts running it). The start-up recovery settles only jobs whose
    # owner is gone (core.hire.settle.recover), never another live process's.
    """
    ALTER TABLE hire_jobs ADD COLUMN owner TEXT;
    """,
    # A provider link's durable claim (several API processes share one database). While a process mints
    # the agent NFT of a pending provider row (token_id NULL), the row names it (link_owner: core.instance
    # id; link_attempt: the request's random token; link_started): a link request of any other process
    # refuses until the owner is gone or the claim is stale, then takes it over by a compare-and-set on
    # link_attempt.
    """
    ALTER TABLE providers ADD COLUMN link_owner TEXT;
    ALTER TABLE providers ADD COLUMN link_attempt TEXT;
    ALTER TABLE providers ADD COLUMN link_started REAL;
    """,
    # Leases, so that one process at a time runs each background job and service (core.jobs:
    # "job:<name>", "service:<name>") and follows the chain ("indexer:<chain_id>"). A takeover bumps
    # `term`; the holder's writes are fenced on (holder, term) (core.store.leases). expires_at: unix
    # seconds of the holder's clock.
    """
    CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        term INTEGER NOT NULL,
        expires_at REAL NOT NULL
    );
    """,
    # An agent's running totals stay within int64 (core.store.wallets.MAX_TOTAL_UNITS): transferred_in
    # counts what transfers brought in (a sold agent's pre-sale balance, into its seller's estate wallet);
    # total_earned + transferred_in bounds all the agent holds, and is kept within int64.
    """
    ALTER TABLE balances ADD COLUMN transferred_in INTEGER NOT NULL DEFAULT 0;
    UPDATE balances SET transferred_in = (
        SELECT COALESCE(SUM(amount + reinvested_delta), 0) FROM ledger
        WHERE ledger.agent_uuid = balances.agent_uuid AND kind = 'transfer' AND amount + reinvested_delta > 0
    );
    """,
    # The shared brain's network-wide money totals have no bound (any number of agents adds to them): each
    # is kept as carry * 2^62 + the column, the column below 2^62 (core.store.wallets.CARRY_UNIT).
    """
    ALTER TABLE shared_brain ADD COLUMN revenue_carry INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE shared_brain ADD COLUMN sold_price_carry INTEGER NOT NULL DEFAULT 0;
    UPDATE shared_brain SET revenue_carry = revenue / 4611686018427387904, revenue = revenue % 4611686018427387904,
        sold_price_carry = sold_price_total / 4611686018427387904,
        sold_price_total = sold_price_total % 4611686018427387904;
    """,
    # A watch is held by its account or by one agent of it (core.keys.Caller.reach: an agent-scoped key
    # deletes only its own agent's): the agent whose key made it; for one an account key made, the
    # watched agent when it is the account's, else (NULL) the account itself. Which key made an older
    # watch is not known: it is given the watched agent when that agent is still the account's.
    """
    ALTER TABLE drop_watches ADD COLUMN holder_agent_uuid TEXT;
    UPDATE drop_watches SET holder_agent_uuid = agent_uuid
        WHERE EXISTS (SELECT 1 FROM wallet_agents a
                      WHERE a.uuid = drop_watches.agent_uuid AND a.account_id = drop_watches.account_id);
    """,
    # The task an A2A message made (api.hire.a2a): one per account and message id (a message runs at most
    # once), its id the hire job's (hire_jobs holds its state, output and error). request_sha256: the hire
    # the message asked for (the same message id asking for another is refused); context_id and the
    # user's message (A2A JSON) are what the job does not hold.
    """
    CREATE TABLE a2a_tasks (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        request_sha256 TEXT NOT NULL,
        context_id TEXT NOT NULL,
        message TEXT NOT NULL,
        created_at REAL NOT NULL,
        UNIQUE (account_id, message_id)
    );
    """,
    # MCP toolsets (api.mcp.toolsets): a key's own choice (NULL: the compact default), and the toolsets
    # enable_toolset added, per holder: a 2025-11-25 session ("session:<id>") or, on the stateless
    # 2026-07-28 revision, the key itself ("key:<hash>"); in the database so every process sees them.
    """
    ALTER TABLE api_keys ADD COLUMN mcp_toolsets TEXT;
    CREATE TABLE mcp_enabled_toolsets (
        holder TEXT NOT NULL,
        toolset TEXT NOT NULL,
        enabled_at REAL NOT NULL,
        PRIMARY KEY (holder, toolset)
    );
    """,
]
