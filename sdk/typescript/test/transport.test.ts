// Retries against a real HTTP server on loopback: the same Idempotency-Key on every attempt of one call,
// 429/503 waited out per Retry-After, a lost answer retried only when the call carries a key.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { AgentLedger, ConflictError, ConnectionError, RateLimitError } from "@agentledger/sdk";

interface Seen {
  path: string;
  key: string | undefined;
  body: string;
}
const seen: Seen[] = [];
/** What to do with the next requests: "503", "429", "drop" (close without answering); then answer. */
const faults: string[] = [];
let base = "";

const EARNED = '{"success":true,"balance":9.8,"toll":0.2,"net":9.8,"ownerCut":9.7,"agentCut":0.1,"serviceCut":0.2,' +
  '"referralCut":0,"ownerBalance":9.7,"agentSelfBalance":0.1,"transactionId":7,"message":"ok"}';

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  let body = "";
  req.on("data", (c: Buffer) => (body += c.toString()));
  req.on("end", () => {
    const key = req.headers["idempotency-key"];
    seen.push({ path: req.url ?? "", key: typeof key === "string" ? key : undefined, body });
    const fault = faults.shift();
    if (fault === "drop") {
      req.socket.destroy();
      return;
    }
    if (fault === "503" || fault === "429" || fault === "429-long") {
      res.writeHead(fault === "503" ? 503 : 429, { "Content-Type": "application/json", "Retry-After": fault === "429-long" ? "120" : "0" });
      res.end(JSON.stringify({ type: "service_error", code: fault === "503" ? "database_unavailable" : "rate_limited", message: "later", param: null }));
      return;
    }
    if (req.url === "/api/agents/spend") {
      res.writeHead(422, { "Content-Type": "application/json" });
      res.end('{"type":"invalid_request","code":"insufficient_balance","message":"not enough","param":"amount"}');
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(req.url?.startsWith("/api/agents/register") ? '{"success":true,"agent":{"id":"u","wallet":"agl_000000000001","name":"n","specialty":"content_seo","balance":0,"referral_code":"r"}}' : EARNED);
  });
});

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const ledger = (): AgentLedger => new AgentLedger({ baseUrl: base, apiKey: "aglk_" + "0".repeat(32), backoffMs: 1, retries: 3 });

test("a lost answer, a 503 and a 429 are retried with the same key, and the answer is exact", async () => {
  seen.length = 0;
  faults.push("drop", "503", "429");
  const r = await ledger().earn("agl_000000000001", "10", "shop");
  assert.equal(seen.length, 4);
  const keys = new Set(seen.map((s) => s.key));
  assert.equal(keys.size, 1);
  assert.match([...keys][0] ?? "", /^[0-9a-f-]{36}$/);
  assert.equal(seen[0]?.body, '{"agentId":"agl_000000000001","amount":10,"source":"shop"}');
  assert.deepEqual([r.ownerCut, r.agentCut, r.serviceCut, r.referralCut], ["9.7", "0.1", "0.2", "0"]);
});

test("two calls get two keys; a key given is the key sent", async () => {
  seen.length = 0;
  await ledger().earn("agl_000000000001", "1");
  await ledger().earn("agl_000000000001", "1", "sdk", { idempotencyKey: "mine-1" });
  assert.notEqual(seen[0]?.key, undefined);
  assert.equal(seen[1]?.key, "mine-1");
  assert.ok(seen[0]?.body.includes('"source":"sdk"'));
});

test("a keyless registration is not resent after a lost answer; it is after a 429", async () => {
  seen.length = 0;
  faults.push("drop");
  await assert.rejects(new AgentLedger({ baseUrl: base, backoffMs: 1 }).register("n", "content_seo"), ConnectionError);
  assert.equal(seen.length, 1);
  assert.equal(seen[0]?.key, undefined);
  seen.length = 0;
  faults.push("429");
  const reg = await new AgentLedger({ baseUrl: base, backoffMs: 1 }).register("n", "content_seo");
  assert.equal(reg.agent.wallet, "agl_000000000001");
  assert.equal(seen.length, 2);
});

test("errors are typed by the API's code; retries give up after `retries`", async () => {
  const err = await ledger().spend("agl_000000000001", "5", "x").catch((e: unknown) => e);
  assert.ok(err instanceof ConflictError);
  assert.equal(err.code, "insufficient_balance");
  assert.ok(err.is("insufficient_balance"));
  assert.equal(err.param, "amount");
  faults.push("429", "429", "429", "429");
  const limited = await ledger().earn("agl_000000000001", "1").catch((e: unknown) => e);
  assert.ok(limited instanceof RateLimitError);
  assert.equal(limited.retryAfter, 0);
  assert.equal(faults.length, 0);
});

test("a Retry-After longer than maxRetryWaitMs is not waited out: the error says how long", async () => {
  seen.length = 0;
  faults.push("429-long");
  const err = await new AgentLedger({ baseUrl: base, apiKey: "aglk_" + "0".repeat(32), maxRetryWaitMs: 60_000 })
    .earn("agl_000000000001", "1")
    .catch((e: unknown) => e);
  assert.ok(err instanceof RateLimitError);
  assert.equal(err.retryAfter, 120);
  assert.equal(seen.length, 1); // not retried
});
