/** Errors: every failed call throws an AgentLedgerError carrying the API's one error shape. */
import type { ErrorCode } from "./generated/codes.js";

export type { ErrorCode } from "./generated/codes.js";

export interface ErrorBody {
  type: string;
  code: string;
  message: string;
  param: string | null;
}

export interface ErrorDetails {
  status?: number | undefined;
  type?: string | undefined;
  code?: string | undefined;
  param?: string | null | undefined;
  retryAfter?: number | undefined;
  idempotencyKey?: string | undefined;
  cause?: unknown;
}

/**
 * A call that did not succeed. `status` is the HTTP status (undefined when no response arrived); `type`,
 * `code`, `message` and `param` are the service's error body; `code` is one of the API's codes (ErrorCode).
 * `idempotencyKey` is the key the call was sent with: calling again with the same key never applies it twice.
 */
export class AgentLedgerError extends Error {
  override name = "AgentLedgerError";
  readonly status: number | undefined;
  readonly type: string | undefined;
  readonly code: ErrorCode | (string & {}) | undefined;
  readonly param: string | null | undefined;
  /** Seconds the service asked to wait (Retry-After), when it said. */
  readonly retryAfter: number | undefined;
  readonly idempotencyKey: string | undefined;

  constructor(message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.type = details.type;
    this.code = details.code;
    this.param = details.param;
    this.retryAfter = details.retryAfter;
    this.idempotencyKey = details.idempotencyKey;
  }

  /** True when the service answered with this `code`. */
  is(code: ErrorCode): boolean {
    return this.code === code;
  }
}

/** 400: the request is malformed or a field is invalid (`param` names it). */
export class InvalidRequestError extends AgentLedgerError {
  override name = "InvalidRequestError";
}
/** 401: missing, malformed or unknown API key or signature. */
export class AuthenticationError extends AgentLedgerError {
  override name = "AuthenticationError";
}
/** 403: the key's scope does not allow this. */
export class PermissionDeniedError extends AgentLedgerError {
  override name = "PermissionDeniedError";
}
/** 404: not found (or not yours). */
export class NotFoundError extends AgentLedgerError {
  override name = "NotFoundError";
}
/** 405, 409, 422: refused by the resource's current state (e.g. insufficient_balance, idempotency_conflict). */
export class ConflictError extends AgentLedgerError {
  override name = "ConflictError";
}
/** 429: rate limited (`retryAfter` says for how long). */
export class RateLimitError extends AgentLedgerError {
  override name = "RateLimitError";
}
/** 5xx: the service or a dependency failed. */
export class ServerError extends AgentLedgerError {
  override name = "ServerError";
}
/** No answer arrived (connection refused or reset, timeout). */
export class ConnectionError extends AgentLedgerError {
  override name = "ConnectionError";
}
/** A check the SDK makes itself failed (a chain hash, an inclusion proof, a webhook signature). */
export class VerificationError extends AgentLedgerError {
  override name = "VerificationError";
}

export function errorFor(status: number, body: unknown, details: ErrorDetails): AgentLedgerError {
  const shaped = isErrorBody(body) ? body : undefined;
  const message = shaped?.message ?? `HTTP ${status}`;
  const all: ErrorDetails = { ...details, status, type: shaped?.type, code: shaped?.code, param: shaped?.param };
  if (status === 400) return new InvalidRequestError(message, all);
  if (status === 401) return new AuthenticationError(message, all);
  if (status === 403) return new PermissionDeniedError(message, all);
  if (status === 404) return new NotFoundError(message, all);
  if (status === 429) return new RateLimitError(message, all);
  if (status >= 500) return new ServerError(message, all);
  if (status === 405 || status === 409 || status === 422) return new ConflictError(message, all);
  return new AgentLedgerError(message, all);
}

function isErrorBody(body: unknown): body is ErrorBody {
  return typeof body === "object" && body !== null && typeof (body as ErrorBody).code === "string";
}
