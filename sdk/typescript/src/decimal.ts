/**
 * Amounts: decimal strings in, decimal strings out, never a binary float on the way.
 *
 * USDC has 6 decimals. An amount is given as a string ("12.5", "0.000001") or as a number that is
 * exact to 6 decimals (12.5 is; 0.1 + 0.2, which is 0.30000000000000004, is not and is refused) with at
 * most 15 significant digits (what a double always holds exactly).
 * Inside, an amount is a bigint of micro-USDC; on the wire it is the JSON number written from the
 * decimal text itself (see json.ts), so no float is ever formed.
 */

export const DECIMALS = 6;
const SCALE = 10n ** BigInt(DECIMALS);
const DECIMAL_TEXT = /^(-?)(\d+)(?:\.(\d+))?$/;

/** What an amount may be given as. */
export type AmountInput = string | number | bigint;

export class AmountError extends TypeError {
  override name = "AmountError";
}

/** `value` in micro-USDC (a bigint), refusing anything not exact to 6 decimals. */
export function toMicro(value: AmountInput, what = "amount"): bigint {
  if (typeof value === "bigint") {
    throw new AmountError(`${what}: a bigint is ambiguous; pass decimal USDC as a string (use fromMicro for micro-USDC)`);
  }
  let text: string;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new AmountError(`${what}: ${value} is not a finite number`);
    text = String(value); // the shortest text that reads back as this double: checked below as any text
    // A double holds any 15 significant digits exactly: with more, its text may not be what was meant
    // (2 ** 53 + 0.5 prints as 9007199254740992).
    if (text.replace(/^-?0*/, "").replace(".", "").replace(/^0+/, "").length > 15) {
      throw new AmountError(`${what}: ${text} has more digits than a number holds exactly; pass a decimal string`);
    }
  } else if (typeof value === "string") {
    text = value.trim();
  } else {
    throw new AmountError(`${what}: expected a decimal string or a number`);
  }
  const m = DECIMAL_TEXT.exec(text);
  if (m === null) throw new AmountError(`${what}: ${JSON.stringify(value)} is not a decimal number`);
  const [, sign = "", whole = "0", frac = ""] = m;
  const trimmed = frac.replace(/0+$/, "");
  if (trimmed.length > DECIMALS) {
    throw new AmountError(`${what}: ${text} has more than ${DECIMALS} decimals`);
  }
  const micro = BigInt(whole) * SCALE + BigInt(trimmed.padEnd(DECIMALS, "0") || "0");
  return sign === "-" ? -micro : micro;
}

/** The canonical decimal text of `micro` micro-USDC: no exponent, no trailing zeros ("12.5", "0.000001", "250"). */
export function fromMicro(micro: bigint): string {
  const sign = micro < 0n ? "-" : "";
  const abs = micro < 0n ? -micro : micro;
  const whole = abs / SCALE;
  const frac = (abs % SCALE).toString().padStart(DECIMALS, "0").replace(/0+$/, "");
  return `${sign}${whole}${frac ? "." + frac : ""}`;
}

/** The canonical decimal text of an amount (validated). */
export function toAmount(value: AmountInput, what = "amount"): string {
  return fromMicro(toMicro(value, what));
}

/** Exact sum of amounts, as canonical decimal text. */
export function addAmounts(...values: AmountInput[]): string {
  return fromMicro(values.reduce<bigint>((acc, v) => acc + toMicro(v), 0n));
}
