/**
 * Checking the service's webhooks on the receiving side. Every delivery carries both signatures:
 * - Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature: "v1,<base64 HMAC-SHA256 of
 *   '{id}.{timestamp}.{body}'>", several separated by spaces), keyed with the secret's bytes (the
 *   `whsec_` form is "whsec_" + base64 of the secret the service gave you; either form is accepted here);
 * - X-Service-Signature: "sha256=" + hex HMAC-SHA256 of the raw body, keyed with the secret.
 * Uses WebCrypto (Node 22 and browsers). Always verify the raw body bytes, before parsing them.
 */

const encoder = new TextEncoder();

async function hmacSha256(key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey("raw", key as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, data as BufferSource));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

function base64ToBytes(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function bytesToBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

function asBytes(body: string | Uint8Array): Uint8Array {
  return typeof body === "string" ? encoder.encode(body) : body;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string {
  if (headers instanceof Headers) return headers.get(name) ?? "";
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? (v[0] ?? "") : (v ?? "");
  }
  return "";
}

export interface StandardWebhookOptions {
  /** Seconds a webhook-timestamp may be away from now (default 300). */
  toleranceSeconds?: number;
  /** Now, in seconds since the epoch (default: the clock). */
  now?: number;
}

/** True when the Standard Webhooks signature over `body` is valid and its timestamp is fresh. */
export async function verifyStandardWebhook(
  secret: string,
  headers: HeaderBag,
  body: string | Uint8Array,
  options: StandardWebhookOptions = {},
): Promise<boolean> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !/^\d+$/.test(timestamp) || !signatures) return false;
  const now = options.now ?? Date.now() / 1000;
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) return false;
  const key = secret.startsWith("whsec_") ? base64ToBytes(secret.slice("whsec_".length)) : encoder.encode(secret);
  const signed = new Uint8Array([...encoder.encode(`${id}.${timestamp}.`), ...asBytes(body)]);
  const expected = encoder.encode(bytesToBase64(await hmacSha256(key, signed)));
  let ok = false;
  for (const part of signatures.split(" ")) {
    const [version, value] = part.split(",", 2);
    if (version === "v1" && value !== undefined && sameBytes(encoder.encode(value), expected)) ok = true;
  }
  return ok;
}

/** True when `signature` (the X-Service-Signature header) is "sha256=" + hex HMAC-SHA256 of `body`. */
export async function verifyServiceSignature(secret: string, body: string | Uint8Array, signature: string): Promise<boolean> {
  const mac = await hmacSha256(encoder.encode(secret), asBytes(body));
  const expected = "sha256=" + Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
  return sameBytes(encoder.encode(expected), encoder.encode(signature));
}

/** The `whsec_` form of a webhook secret the service gave (what Standard Webhooks libraries take). */
export function standardWebhookSecret(secret: string): string {
  return "whsec_" + bytesToBase64(encoder.encode(secret));
}
