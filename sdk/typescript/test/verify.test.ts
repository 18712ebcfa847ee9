// RFC 9162 inclusion proofs and the webhook signatures, against node:crypto (an implementation apart).
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { test } from "node:test";
import {
  canonicalJson,
  merkleLeafHash,
  standardWebhookSecret,
  verifyInclusion,
  verifyServiceSignature,
  verifyStandardWebhook,
} from "@agentledger/sdk";

const h = (...parts: Buffer[]): Buffer => createHash("sha256").update(Buffer.concat(parts)).digest();
const leaf = (d: string): Buffer => h(Buffer.from([0]), Buffer.from(d));
const node = (l: Buffer, r: Buffer): Buffer => h(Buffer.from([1]), l, r);

/** RFC 9162 MTH and PATH, straight from the definitions. */
function root(leaves: Buffer[]): Buffer {
  if (leaves.length === 1) return leaves[0] as Buffer;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return node(root(leaves.slice(0, k)), root(leaves.slice(k)));
}
function path(m: number, leaves: Buffer[]): Buffer[] {
  if (leaves.length === 1) return [];
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return m < k ? [...path(m, leaves.slice(0, k)), root(leaves.slice(k))] : [...path(m - k, leaves.slice(k)), root(leaves.slice(0, k))];
}
const hex = (b: Buffer): string => "0x" + b.toString("hex");

test("every leaf of trees of 1 to 13 leaves is proven; mutated proofs are not", () => {
  for (let n = 1; n <= 13; n++) {
    const leaves = Array.from({ length: n }, (_, i) => leaf(`${i + 1}:agent:x:${i}`));
    const r = hex(root(leaves));
    for (let m = 0; m < n; m++) {
      const p = path(m, leaves).map(hex);
      assert.equal(merkleLeafHash(`${m + 1}:agent:x:${m}`), hex(leaves[m] as Buffer));
      assert.ok(verifyInclusion(m, n, hex(leaves[m] as Buffer), p, r), `${m} of ${n}`);
      if (n > 1) {
        assert.ok(!verifyInclusion((m + 1) % n, n, hex(leaves[m] as Buffer), p, r));
        assert.ok(!verifyInclusion(m, n, hex(leaves[m] as Buffer), p.slice(1), r));
        const flipped = [...p];
        flipped[0] = "0x" + "00".repeat(32);
        assert.ok(!verifyInclusion(m, n, hex(leaves[m] as Buffer), flipped, r));
      }
    }
  }
});

test("canonical JSON (RFC 8785) sorts keys by UTF-16 code units and refuses fractions", () => {
  assert.equal(canonicalJson({ b: 1, a: [true, null, "é\u2028"], "\u00e9": 2, "\ud83d\ude00": 3, "\uff01": 4 }),
    '{"a":[true,null,"é\u2028"],"b":1,"é":2,"\ud83d\ude00":3,"！":4}');
  assert.throws(() => canonicalJson({ a: 1.5 }));
});

test("webhook signatures: both headers, tampering and staleness refused", async () => {
  const secret = "s3cret-from-the-service";
  const body = '{"event":"order.completed","amount":12.5}';
  const service = "sha256=" + createHmac("sha256", secret).update(body).digest("hex");
  assert.ok(await verifyServiceSignature(secret, body, service));
  assert.ok(!(await verifyServiceSignature(secret, body + " ", service)));
  const now = 1_800_000_000;
  const mac = createHmac("sha256", Buffer.from(secret)).update(`msg_1.${now}.${body}`).digest("base64");
  const headers = { "Webhook-Id": "msg_1", "webhook-timestamp": String(now), "webhook-signature": `v1,bogus v1,${mac}` };
  assert.ok(await verifyStandardWebhook(standardWebhookSecret(secret), headers, body, { now }));
  assert.ok(await verifyStandardWebhook(secret, new Headers(headers), new TextEncoder().encode(body), { now: now + 299 }));
  assert.ok(!(await verifyStandardWebhook(secret, headers, body, { now: now + 301 })));
  assert.ok(!(await verifyStandardWebhook(secret, headers, body.replace("12.5", "125"), { now })));
  const { "Webhook-Id": _id, ...rest } = headers;
  assert.ok(!(await verifyStandardWebhook(secret, { ...rest, "webhook-id": "msg_2" }, body, { now })));
});
