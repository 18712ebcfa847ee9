// Generated from the agentledger OpenAPI document by scripts/generate.mjs (openapi-typescript): do not edit.
// Regenerate with `make sdk-types` at the repository's root.

/** Every `code` an error of the API may carry, as the document lists them. */
export type ErrorCode =
  | "account_key_required"
  | "agent_not_found"
  | "agent_not_minted"
  | "agent_paused"
  | "agent_settling"
  | "already_claimed"
  | "already_released"
  | "amount_too_large"
  | "asking_price_mismatch"
  | "asset_not_found"
  | "balance_limit"
  | "cancel_event_missing"
  | "chain_error"
  | "chain_mismatch"
  | "chain_unavailable"
  | "commit_event_missing"
  | "content_not_found"
  | "daily_cap_exceeded"
  | "database_unavailable"
  | "deliverable_mismatch"
  | "deliverable_quota"
  | "digest_mismatch"
  | "duplicate_key"
  | "email_has_key"
  | "empty_update"
  | "entry_not_found"
  | "escrow_closed"
  | "escrow_not_deployed"
  | "escrow_not_locked"
  | "evidence_content_not_accepted"
  | "evidence_required"
  | "funding_failed"
  | "funding_unconfirmed"
  | "hire_interrupted"
  | "idempotency_conflict"
  | "idempotency_in_flight"
  | "idempotency_unsupported"
  | "indexer_halted"
  | "input_schema_mismatch"
  | "input_too_large"
  | "insufficient_allowance"
  | "insufficient_balance"
  | "insufficient_scope"
  | "internal_error"
  | "internal_step_failed"
  | "invalid_action"
  | "invalid_address"
  | "invalid_amount"
  | "invalid_api_key"
  | "invalid_cid"
  | "invalid_content"
  | "invalid_cursor"
  | "invalid_email"
  | "invalid_field"
  | "invalid_idempotency_key"
  | "invalid_input"
  | "invalid_job_id"
  | "invalid_json"
  | "invalid_key"
  | "invalid_niche"
  | "invalid_payment_signature"
  | "invalid_reason"
  | "invalid_request"
  | "invalid_schema"
  | "invalid_service_type"
  | "invalid_signature"
  | "invalid_sla"
  | "invalid_specialty"
  | "invalid_string"
  | "invalid_transition"
  | "invalid_tree_size"
  | "invalid_url"
  | "invalid_webhook_url"
  | "item_exists"
  | "item_not_found"
  | "job_in_progress"
  | "job_not_found"
  | "job_not_in_transaction"
  | "listed_event_missing"
  | "listing_ended"
  | "listing_not_active"
  | "listing_not_found"
  | "listing_of_other_agent"
  | "listing_settling"
  | "malformed_api_key"
  | "memory_full"
  | "mint_failed"
  | "missing_address"
  | "missing_agent_id"
  | "missing_api_key"
  | "missing_email"
  | "missing_field"
  | "missing_payment_data"
  | "missing_payment_signature"
  | "missing_signature"
  | "multiple_providers"
  | "no_provider_available"
  | "not_nft_owner"
  | "nothing_to_claim"
  | "notice_window_active"
  | "offer_below_floor"
  | "offer_exists"
  | "offer_expired"
  | "offer_nonce_used"
  | "offer_signature_mismatch"
  | "offers_not_accepted"
  | "order_not_found"
  | "order_pending"
  | "output_schema_mismatch"
  | "payload_too_large"
  | "payment_signature_mismatch"
  | "price_above_max"
  | "provider_already_linked"
  | "provider_cannot_be_paid"
  | "provider_error"
  | "provider_invalid_output"
  | "provider_link_in_progress"
  | "provider_mismatch"
  | "provider_not_found"
  | "provider_not_linked"
  | "provider_paused"
  | "provider_refused_target"
  | "provider_response_too_large"
  | "provider_timeout"
  | "provider_unreachable"
  | "rate_limit_exceeded"
  | "release_refused"
  | "reserved_key"
  | "schema_too_large"
  | "self_hire"
  | "self_wallet_taken"
  | "seller_cannot_buy"
  | "service_not_found"
  | "session_cancelled"
  | "session_changed"
  | "session_completed"
  | "session_expired"
  | "session_in_progress"
  | "session_key_mismatch"
  | "session_not_cancelable"
  | "session_not_found"
  | "signature_expired"
  | "signature_mismatch"
  | "signature_replayed"
  | "timestamp_out_of_window"
  | "transaction_failed"
  | "transaction_not_found"
  | "tx_failed"
  | "tx_not_found"
  | "unknown_field"
  | "unknown_referral_code"
  | "unknown_referrer"
  | "unknown_token"
  | "unsupported_media_type"
  | "unsupported_payment_handler"
  | "upload_in_progress"
  | "upload_slots_busy"
  | "upload_timeout"
  | "value_too_large"
  | "watch_not_found"
  | "webhook_url_refused"
  | "wrong_agent"
  | "wrong_commit_kind"
  | "wrong_sender";

export const ERROR_CODES: readonly ErrorCode[] = [
  "account_key_required",
  "agent_not_found",
  "agent_not_minted",
  "agent_paused",
  "agent_settling",
  "already_claimed",
  "already_released",
  "amount_too_large",
  "asking_price_mismatch",
  "asset_not_found",
  "balance_limit",
  "cancel_event_missing",
  "chain_error",
  "chain_mismatch",
  "chain_unavailable",
  "commit_event_missing",
  "content_not_found",
  "daily_cap_exceeded",
  "database_unavailable",
  "deliverable_mismatch",
  "deliverable_quota",
  "digest_mismatch",
  "duplicate_key",
  "email_has_key",
  "empty_update",
  "entry_not_found",
  "escrow_closed",
  "escrow_not_deployed",
  "escrow_not_locked",
  "evidence_content_not_accepted",
  "evidence_required",
  "funding_failed",
  "funding_unconfirmed",
  "hire_interrupted",
  "idempotency_conflict",
  "idempotency_in_flight",
  "idempotency_unsupported",
  "indexer_halted",
  "input_schema_mismatch",
  "input_too_large",
  "insufficient_allowance",
  "insufficient_balance",
  "insufficient_scope",
  "internal_error",
  "internal_step_failed",
  "invalid_action",
  "invalid_address",
  "invalid_amount",
  "invalid_api_key",
  "invalid_cid",
  "invalid_content",
  "invalid_cursor",
  "invalid_email",
  "invalid_field",
  "invalid_idempotency_key",
  "invalid_input",
  "invalid_job_id",
  "invalid_json",
  "invalid_key",
  "invalid_niche",
  "invalid_payment_signature",
  "invalid_reason",
  "invalid_request",
  "invalid_schema",
  "invalid_service_type",
  "invalid_signature",
  "invalid_sla",
  "invalid_specialty",
  "invalid_string",
  "invalid_transition",
  "invalid_tree_size",
  "invalid_url",
  "invalid_webhook_url",
  "item_exists",
  "item_not_found",
  "job_in_progress",
  "job_not_found",
  "job_not_in_transaction",
  "listed_event_missing",
  "listing_ended",
  "listing_not_active",
  "listing_not_found",
  "listing_of_other_agent",
  "listing_settling",
  "malformed_api_key",
  "memory_full",
  "mint_failed",
  "missing_address",
  "missing_agent_id",
  "missing_api_key",
  "missing_email",
  "missing_field",
  "missing_payment_data",
  "missing_payment_signature",
  "missing_signature",
  "multiple_providers",
  "no_provider_available",
  "not_nft_owner",
  "nothing_to_claim",
  "notice_window_active",
  "offer_below_floor",
  "offer_exists",
  "offer_expired",
  "offer_nonce_used",
  "offer_signature_mismatch",
  "offers_not_accepted",
  "order_not_found",
  "order_pending",
  "output_schema_mismatch",
  "payload_too_large",
  "payment_signature_mismatch",
  "price_above_max",
  "provider_already_linked",
  "provider_cannot_be_paid",
  "provider_error",
  "provider_invalid_output",
  "provider_link_in_progress",
  "provider_mismatch",
  "provider_not_found",
  "provider_not_linked",
  "provider_paused",
  "provider_refused_target",
  "provider_response_too_large",
  "provider_timeout",
  "provider_unreachable",
  "rate_limit_exceeded",
  "release_refused",
  "reserved_key",
  "schema_too_large",
  "self_hire",
  "self_wallet_taken",
  "seller_cannot_buy",
  "service_not_found",
  "session_cancelled",
  "session_changed",
  "session_completed",
  "session_expired",
  "session_in_progress",
  "session_key_mismatch",
  "session_not_cancelable",
  "session_not_found",
  "signature_expired",
  "signature_mismatch",
  "signature_replayed",
  "timestamp_out_of_window",
  "transaction_failed",
  "transaction_not_found",
  "tx_failed",
  "tx_not_found",
  "unknown_field",
  "unknown_referral_code",
  "unknown_referrer",
  "unknown_token",
  "unsupported_media_type",
  "unsupported_payment_handler",
  "upload_in_progress",
  "upload_slots_busy",
  "upload_timeout",
  "value_too_large",
  "watch_not_found",
  "webhook_url_refused",
  "wrong_agent",
  "wrong_commit_kind",
  "wrong_sender",
];
