// Amounts never pass through a binary float: in as decimal strings (or numbers exact to 6 decimals),
// on the wire as the decimal text itself, out as canonical decimal strings.
import assert from "node:assert/strict";
import { test } from "node:test";
import { addAmounts, AmountError, JsonNumber, parseJson, stringifyJson, toAmount, toMicro } from "@agentledger/sdk";

test("0.1 + 0.2 is refused, 0.3 and decimal strings are exact", () => {
  assert.throws(() => toAmount(0.1 + 0.2), AmountError);
  assert.equal(toAmount(0.3), "0.3");
  assert.equal(toAmount("0.1"), "0.1");
  assert.equal(addAmounts("0.1", "0.2"), "0.3");
  assert.equal(addAmounts(0.1, 0.2), "0.3"); // each is exact to 6 decimals; their sum is computed in integers
});

test("6-decimal edges", () => {
  assert.equal(toAmount("0.000001"), "0.000001");
  assert.equal(toMicro("0.000001"), 1n);
  assert.throws(() => toAmount("0.0000001"), /more than 6 decimals/);
  assert.throws(() => toAmount(1e-7), AmountError); // "1e-7": an exponent is not exact decimal text
  assert.equal(toAmount("1.1234560"), "1.123456"); // trailing zeros beyond 6 places are not precision
  assert.equal(toAmount("999999999999.999999"), "999999999999.999999");
  assert.equal(toAmount(123456789.123456), "123456789.123456");
  assert.throws(() => toAmount(2 ** 53 + 0.5), AmountError); // would be 9007199254740992: not what was meant
  assert.equal(toAmount("250"), "250");
  assert.equal(toAmount("12.50"), "12.5");
  for (const bad of ["", "1,5", "1e3", "0x10", "NaN", "Infinity", ".5", "5."]) {
    assert.throws(() => toAmount(bad), AmountError, bad);
  }
  assert.throws(() => toAmount(Number.NaN), AmountError);
  assert.throws(() => toAmount(10n), AmountError);
});

test("amounts are written from their decimal text and read back as text", () => {
  const body = stringifyJson({ amount: new JsonNumber(toAmount("999999999999.999999")), n: 3, s: "x" });
  assert.equal(body, '{"amount":999999999999.999999,"n":3,"s":"x"}'); // as a double: 1000000000000
  assert.throws(() => stringifyJson({ amount: 0.1 + 0.2 }), /binary float/);
  const back = parseJson('{"a":0.97,"b":250,"c":1e2,"d":12345678901234567890,"e":[0.000001],"f":"0.5"}');
  assert.deepEqual(back, { a: "0.97", b: 250, c: "1e2", d: "12345678901234567890", e: ["0.000001"], f: "0.5" });
  assert.throws(() => parseJson('{"a":1} x'), SyntaxError);
});
