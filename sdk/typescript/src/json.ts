/**
 * JSON without binary floats: a number the service sends with a fraction (an amount such as 0.97) is
 * read as its decimal text, and an amount the SDK sends is written from its decimal text.
 *
 * `parseJson` returns integers within +-(2^53 - 1) as numbers and every other number (a fraction, an
 * exponent, a larger integer) as the exact text the service wrote. `stringifyJson` writes a
 * `JsonNumber` as its text, unquoted.
 */

// JSON.stringify calls JsonNumber.toJSON and quotes what it returns: a marker (starting with NUL, which
// JSON.stringify writes as the six characters \u0000, and which no request string may hold anyway)
// lets stringifyJson unquote exactly those strings.
const MARK = `\u0000num${Math.random().toString(36).slice(2)}:`;
const MARKED = new RegExp(`"\\\\u0000${MARK.slice(1)}([^"]*)"`, "g");

/** A number to be written as its decimal text (an amount): never goes through a double. */
export class JsonNumber {
  constructor(readonly text: string) {
    if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) throw new TypeError(`not a JSON number: ${text}`);
  }
  toJSON(): string {
    return MARK + this.text;
  }
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function parseJson(text: string): Json {
  let i = 0;
  const n = text.length;
  const fail = (what: string): never => {
    throw new SyntaxError(`invalid JSON at ${i}: ${what}`);
  };
  const ws = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  };
  const value = (): Json => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const out: { [key: string]: Json } = {};
      ws();
      if (text[i] === "}") {
        i++;
        return out;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("expected a key");
        const key = string();
        ws();
        if (text[i] !== ":") fail("expected ':'");
        i++;
        Object.defineProperty(out, key, { value: value(), enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return out;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      const out: Json[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return out;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    return number();
  };
  const string = (): string => {
    const start = i;
    i++;
    for (;;) {
      const c = text[i];
      if (c === undefined) fail("unterminated string");
      if (c === '"') break;
      i += c === "\\" ? 2 : 1;
    }
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const number = (): number | string => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (m === null) return fail("unexpected character");
    i += m[0].length;
    const literal = m[0];
    if (m[2] === undefined && m[3] === undefined) {
      const asNumber = Number(literal);
      if (Number.isSafeInteger(asNumber)) return asNumber;
    }
    return literal;
  };
  const out = value();
  ws();
  if (i !== n) fail("trailing characters");
  return out;
}

export function stringifyJson(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "number" && !Number.isSafeInteger(v)) {
      throw new TypeError(`refusing to send the binary float ${v}: give it as a decimal string`);
    }
    return v;
  });
  return text.replace(MARKED, "$1");
}
