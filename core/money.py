"""Money: integers of micro-USDC inside, decimals at the edge, and the earnings split rule.

The split is the same rule the AgentPayouts contract applies on-chain (tests hold them equal).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Context, Decimal, Inexact, InvalidOperation, Rounded, localcontext

USDC_DECIMALS = 6
UNITS_PER_USDC: int = 10**USDC_DECIMALS
#: Upper bound for any single amount the API accepts: 10^12 USDC, far above any real payment,
#: far below anything that could overflow a SQLite INTEGER when summed.
MAX_AMOUNT_UNITS = 10**12 * UNITS_PER_USDC

BPS = 10_000
OWNER_BPS = 9_700
AGENT_BPS = 100
REFERRAL_BPS = 50


class AmountError(ValueError):
    """An amount that is not a valid, positive, at-most-6-decimal USDC figure."""


MAX_AMOUNT_WHOLE = MAX_AMOUNT_UNITS // UNITS_PER_USDC
#: Exact arithmetic or an exception: 40 digits hold any amount the fast path lets through.
_EXACT = Context(prec=40, traps=[Inexact, Rounded, InvalidOperation])


def parse_usdc(value: object, *, allow_zero: bool = False) -> int:
    """Parse a decimal USDC amount (e.g. ``250`` or ``"12.5"``) into micro-USDC units.

    Floats are accepted only through their shortest repr (JSON numbers arrive as Decimal when
    the JSON is parsed with ``parse_float=Decimal``); never through binary arithmetic.
    """
    # The API's every request: a positive int or a short Decimal in range, converted exactly;
    # anything else (and every refusal) takes the general path below.
    if type(value) is int:
        if 0 < value <= MAX_AMOUNT_WHOLE:
            return value * UNITS_PER_USDC
    elif type(value) is Decimal:
        try:
            if value > 0 and value.adjusted() <= 12:
                units = value.scaleb(USDC_DECIMALS, _EXACT)
                n = int(units)
                if n == units and n <= MAX_AMOUNT_UNITS:
                    return n
        except ArithmeticError:  # NaN, or more digits than _EXACT holds
            pass
    return _parse_usdc(value, allow_zero)


def _parse_usdc(value: object, allow_zero: bool) -> int:
    if isinstance(value, bool):
        raise AmountError("amount must be a number")
    try:
        d = Decimal(str(value)) if isinstance(value, (int, float, str)) else value
    except InvalidOperation as exc:
        raise AmountError("amount must be a decimal number") from exc
    if not isinstance(d, Decimal):
        raise AmountError("amount must be a number")
    if not d.is_finite():
        raise AmountError("amount must be finite")
    if d < 0:
        raise AmountError("amount must not be negative")
    if d == 0 and not allow_zero:
        raise AmountError("amount must be greater than zero")
    if d.adjusted() > 12:  # >= 10^13 USDC: refuse before building a huge integer
        raise AmountError("amount is too large")
    with localcontext() as ctx:  # exact: enough precision for every digit given
        ctx.prec = len(d.as_tuple().digits) + USDC_DECIMALS + 2
        units = d.scaleb(USDC_DECIMALS)
        if units != units.to_integral_value():
            raise AmountError(f"amount has more than {USDC_DECIMALS} decimals")
    result = int(units)
    if result > MAX_AMOUNT_UNITS:
        raise AmountError("amount is too large")
    return result


def usdc_text(units: int) -> str:
    """Micro-USDC units as the shortest decimal text of USDC (``12500000`` -> ``"12.5"``): the one
    formatter of amounts, for JSON numbers (core.jsontext.usdc), messages and pages. Integer
    arithmetic only: it runs several times per API response."""
    if units < 0:
        return "-" + usdc_text(-units)
    whole, frac = divmod(units, UNITS_PER_USDC)
    if frac:
        return f"{whole}.{frac:06d}".rstrip("0")
    return str(whole)


@dataclass(frozen=True)
class Split:
    """One earning A split into its four parts; they always sum exactly to A."""

    amount: int
    owner_cut: int
    agent_cut: int
    service_cut: int
    referral_cut: int

    @property
    def net(self) -> int:
        """What the agent's wallet is credited: owner share plus agent share."""
        return self.owner_cut + self.agent_cut


def split(amount: int, referred: bool) -> Split:
    """Apply the protocol split: 97% owner (less 0.5% referral), 1% agent, 2% + dust service."""
    if amount < 0:
        raise AmountError("amount must not be negative")
    agent_cut = amount * AGENT_BPS // BPS
    referral_cut = amount * REFERRAL_BPS // BPS if referred else 0
    owner_cut = amount * OWNER_BPS // BPS - referral_cut
    service_cut = amount - owner_cut - agent_cut - referral_cut
    return Split(amount, owner_cut, agent_cut, service_cut, referral_cut)
