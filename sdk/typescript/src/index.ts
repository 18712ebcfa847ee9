export { AgentLedger, DEFAULT_BASE_URL, DEFAULT_SOURCE, amountOut, withAmounts } from "./client.js";
export type { AgentLedgerOptions } from "./client.js";
export type * from "./types.js";
export { AmountError, DECIMALS, addAmounts, fromMicro, toAmount, toMicro, type AmountInput } from "./decimal.js";
export {
  AgentLedgerError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  VerificationError,
  type ErrorCode,
} from "./errors.js";
export { ERROR_CODES } from "./generated/codes.js";
export type { components, operations, paths } from "./generated/schema.js";
export { JsonNumber, parseJson, stringifyJson, type Json } from "./json.js";
export { IDEMPOTENCY_HEADER, REPLAYED_HEADER, parseRetryAfter } from "./transport.js";
export { auditLeafHash, canonicalJson, decisionChainHash, merkleLeafHash, sha256Hex, verifyInclusion } from "./verify.js";
export { standardWebhookSecret, verifyServiceSignature, verifyStandardWebhook, type StandardWebhookOptions } from "./webhooks.js";
export * as messages from "./messages.js";
