/**
 * Checking a decision log entry without trusting the service (the formulas /methodology publishes):
 * - payload_hash = SHA-256(RFC 8785 canonical JSON of the stored entry),
 * - chain_hash = SHA-256(agent_id + ":" + seq + ":" + prev_hash + ":" + payload_hash) (lowercase hex,
 *   prev_hash "genesis" for an agent's first entry),
 * - the entry is leaf `audit_id - 1` of one RFC 9162 Merkle tree (SHA-256, leaf prefix 0x00, node prefix
 *   0x01), its leaf data the ASCII "<audit_id>:<stream>:<chain_hash>".
 */
import { bytesToHex, hexToBytes, sha256, stringToBytes } from "viem";
import type { Json } from "./json.js";

/** RFC 8785 (JCS) canonical JSON of a value holding no number but safe integers. */
export function canonicalJson(value: Json | undefined): string {
  if (value === null || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new TypeError(`canonical JSON here holds integers only, not ${value}`);
    return String(value);
  }
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(",")}]`;
  if (typeof value === "object") {
    // JCS orders keys by their UTF-16 code units: what Array.prototype.sort does by default
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
  }
  throw new TypeError("not JSON");
}

export function sha256Hex(text: string): string {
  return sha256(stringToBytes(text)).slice(2);
}

export function decisionChainHash(agentUuid: string, seq: number, prevHash: string, payloadHash: string): string {
  return sha256Hex(`${agentUuid}:${seq}:${prevHash}:${payloadHash}`);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** RFC 9162 leaf hash of `data`: SHA-256(0x00 || data), as 0x-hex. */
export function merkleLeafHash(data: string): `0x${string}` {
  return sha256(concat(new Uint8Array([0]), stringToBytes(data)));
}

/** The leaf hash of audit entry `auditId` of `stream` with `chainHash`. */
export function auditLeafHash(auditId: number, stream: string, chainHash: string): `0x${string}` {
  return merkleLeafHash(`${auditId}:${stream}:${chainHash}`);
}

/**
 * RFC 9162 section 2.1.3.2: does `proof` show leaf `index` (hash `leaf`) in the tree of `treeSize`
 * leaves whose root is `root`? Hashes as 0x-hex.
 */
export function verifyInclusion(index: number, treeSize: number, leaf: string, proof: readonly string[], root: string): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(treeSize) || index < 0 || index >= treeSize) return false;
  let fn = BigInt(index);
  let sn = BigInt(treeSize - 1);
  let r = hexToBytes(leaf as `0x${string}`);
  for (const p of proof) {
    if (sn === 0n) return false;
    const node = hexToBytes(p as `0x${string}`);
    if ((fn & 1n) === 1n || fn === sn) {
      r = sha256(concat(new Uint8Array([1]), node, r), "bytes");
      if ((fn & 1n) === 0n) {
        while ((fn & 1n) === 0n && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      }
    } else {
      r = sha256(concat(new Uint8Array([1]), r, node), "bytes");
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && bytesToHex(r) === root.toLowerCase();
}
