/**
 * The HTTP layer: openapi-fetch over the generated paths, with retries that never apply a call twice.
 *
 * What is retried (at most `retries` times, capped exponential backoff with jitter, or after the
 * service's Retry-After when it gives one; a Retry-After longer than `maxRetryWaitMs` is not waited
 * out: the error is thrown instead):
 * - 429 and a refused connection (the service did nothing), for every call;
 * - a lost answer (reset, timeout), 503, and 409 idempotency_in_flight, only for calls that are safe to
 *   repeat: GET and DELETE, and calls sent with an Idempotency-Key (the service applies a key once and
 *   answers a repeat with the stored response).
 * Every value-moving call of the SDK sends an Idempotency-Key (a random UUID per logical call, the same
 * on every retry; pass your own to retry from another process after a crash).
 */
import createClient from "openapi-fetch";
import { ConnectionError, errorFor, type AgentLedgerError } from "./errors.js";
import { parseJson, stringifyJson, type Json } from "./json.js";
import type { paths } from "./generated/schema.js";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";

export interface TransportOptions {
  /** The service, e.g. http://127.0.0.1:8080 (no trailing path). */
  baseUrl: string;
  /** `aglk_...`: required by every call that moves value or reads private data. */
  apiKey?: string | undefined;
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: typeof globalThis.fetch | undefined;
  retries?: number | undefined;
  backoffMs?: number | undefined;
  maxBackoffMs?: number | undefined;
  maxRetryWaitMs?: number | undefined;
  /** Per attempt. */
  timeoutMs?: number | undefined;
}

interface Settings {
  retries: number;
  backoffMs: number;
  maxBackoffMs: number;
  maxRetryWaitMs: number;
  timeoutMs: number;
  fetch: typeof globalThis.fetch;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Seconds from a Retry-After header (delta-seconds or an HTTP date). */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

function refused(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; depth < 4 && typeof e === "object" && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN") return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** A fetch that retries as the module comment says. */
function retryingFetch(s: Settings): (input: Request) => Promise<Response> {
  return async (request: Request): Promise<Response> => {
    const repeatable = ["GET", "DELETE", "HEAD"].includes(request.method) || request.headers.has(IDEMPOTENCY_HEADER);
    for (let attempt = 0; ; attempt++) {
      const backoff = Math.min(s.maxBackoffMs, s.backoffMs * 2 ** attempt) * (0.5 + Math.random() / 2);
      let response: Response;
      try {
        response = await s.fetch(request.clone(), { signal: AbortSignal.timeout(s.timeoutMs) });
      } catch (error) {
        if (attempt < s.retries && (repeatable || refused(error))) {
          await sleep(backoff);
          continue;
        }
        throw new ConnectionError(`no answer from ${request.method} ${new URL(request.url).pathname}: ${String(error)}`, {
          cause: error,
          idempotencyKey: request.headers.get(IDEMPOTENCY_HEADER) ?? undefined,
        });
      }
      const wait = parseRetryAfter(response.headers.get("Retry-After"));
      const retryable =
        response.status === 429 ||
        (repeatable && (response.status === 503 || (response.status === 409 && wait !== undefined)));
      if (!retryable || attempt >= s.retries) return response;
      if (wait !== undefined && wait * 1000 > s.maxRetryWaitMs) return response;
      await response.body?.cancel();
      await sleep(wait !== undefined ? wait * 1000 : backoff);
    }
  };
}

export type Api = ReturnType<typeof createClient<paths>>;

export interface Transport {
  api: Api;
  baseUrl: string;
  apiKey: string | undefined;
  /** The raw fetch with retries (for the calls openapi-fetch does not describe: multipart uploads). */
  fetch: (input: Request) => Promise<Response>;
}

export function createTransport(options: TransportOptions): Transport {
  const settings: Settings = {
    retries: options.retries ?? 3,
    backoffMs: options.backoffMs ?? 250,
    maxBackoffMs: options.maxBackoffMs ?? 8_000,
    maxRetryWaitMs: options.maxRetryWaitMs ?? 60_000,
    timeoutMs: options.timeoutMs ?? 30_000,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
  };
  if (settings.retries < 0) throw new RangeError("retries must be >= 0");
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const fetch = retryingFetch(settings);
  const headers: Record<string, string> = { Accept: "application/json" };
  if (options.apiKey !== undefined) headers["Authorization"] = `Bearer ${options.apiKey}`;
  const api = createClient<paths>({ baseUrl, fetch, headers, bodySerializer: stringifyJson });
  return { api, baseUrl, apiKey: options.apiKey, fetch };
}

/** What openapi-fetch answers when asked to parse as text. */
export interface TextResult {
  data?: string | undefined;
  error?: unknown;
  response: Response;
}

/** The answer's JSON (numbers with a fraction as their decimal text), or the typed error. */
export async function answer(call: Promise<TextResult>, idempotencyKey?: string): Promise<{ body: Json; replayed: boolean }> {
  const { data, error, response } = await call;
  if (!response.ok) throw failure(response, error, idempotencyKey);
  return {
    body: data === undefined || data === "" ? null : parseJson(data),
    replayed: response.headers.get(REPLAYED_HEADER) === "true",
  };
}

export function failure(response: Response, body: unknown, idempotencyKey?: string): AgentLedgerError {
  return errorFor(response.status, body, {
    retryAfter: parseRetryAfter(response.headers.get("Retry-After")),
    idempotencyKey,
  });
}
