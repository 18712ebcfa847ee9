"""core.money without a chain: the split rule's invariants and USDC parsing/formatting."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core import money
from core.money import MAX_AMOUNT_UNITS, UNITS_PER_USDC, AmountError, parse_usdc, split, usdc_text

# ---- split ---------------------------------------------------------------------------------------


@settings(max_examples=500)
@given(amount=st.integers(min_value=0, max_value=10**18), referred=st.booleans())
@example(amount=0, referred=True)
@example(amount=1, referred=True)
@example(amount=199, referred=True)
@example(amount=200, referred=True)
@example(amount=10**18, referred=True)
def test_split_invariants(amount: int, referred: bool) -> None:
    s = split(amount, referred)
    parts = (s.owner_cut, s.agent_cut, s.service_cut, s.referral_cut)
    assert s.amount == amount
    assert sum(parts) == amount
    assert all(isinstance(p, int) and p >= 0 for p in parts)
    assert s.agent_cut == amount * 100 // 10_000
    assert s.referral_cut == (amount * 50 // 10_000 if referred else 0)
    assert s.owner_cut == amount * 9_700 // 10_000 - s.referral_cut
    # the service takes at least its 2%, and only rounding dust (< 1 unit per floored part) above it
    floor_2pct = amount * 200 // 10_000
    assert floor_2pct <= s.service_cut <= floor_2pct + 3
    assert s.net == s.owner_cut + s.agent_cut


@given(amount=st.integers(min_value=0, max_value=10**18))
def test_referral_comes_out_of_the_owner_share_only(amount: int) -> None:
    plain, referred = split(amount, False), split(amount, True)
    assert plain.referral_cut == 0
    assert referred.agent_cut == plain.agent_cut
    assert referred.service_cut == plain.service_cut
    assert referred.owner_cut + referred.referral_cut == plain.owner_cut


def test_split_known_values() -> None:
    assert split(0, True) == money.Split(0, 0, 0, 0, 0)
    assert split(1, True) == money.Split(1, 0, 0, 1, 0)
    assert split(100, False) == money.Split(100, 97, 1, 2, 0)
    assert split(199, True) == money.Split(199, 193, 1, 5, 0)  # referral floors to 0 below 200
    assert split(200, True) == money.Split(200, 193, 2, 4, 1)
    assert split(250 * UNITS_PER_USDC, True) == money.Split(250_000_000, 241_250_000, 2_500_000, 5_000_000, 1_250_000)
    assert (money.BPS, money.OWNER_BPS, money.AGENT_BPS, money.REFERRAL_BPS) == (10_000, 9_700, 100, 50)


@pytest.mark.parametrize("amount", [-1, -(10**18)])
def test_split_rejects_negative(amount: int) -> None:
    with pytest.raises(AmountError):
        split(amount, False)


# ---- parse_usdc / usdc_text -----------------------------------------------------------------------


@settings(max_examples=500)
@given(units=st.integers(min_value=0, max_value=MAX_AMOUNT_UNITS))
@example(units=0)
@example(units=1)
@example(units=UNITS_PER_USDC)
@example(units=MAX_AMOUNT_UNITS)
@example(units=MAX_AMOUNT_UNITS - 1)
def test_format_then_parse_round_trips(units: int) -> None:
    d = Decimal(usdc_text(units))
    assert d == Decimal(units) / UNITS_PER_USDC
    assert parse_usdc(d, allow_zero=True) == units
    assert parse_usdc(str(d), allow_zero=True) == units
    # normalised: no trailing zeros after the point, no exponent for whole amounts
    text = usdc_text(units)
    assert str(d) == text
    if "." in text:
        assert not text.endswith("0")
        assert len(text.split(".")[1]) <= 6
    if units % UNITS_PER_USDC == 0:
        assert text == str(units // UNITS_PER_USDC)


@given(
    whole=st.integers(min_value=0, max_value=10**12 - 1),
    frac=st.integers(min_value=0, max_value=10**6 - 1),
    places=st.integers(min_value=6, max_value=12),
)
def test_parse_then_format_round_trips(whole: int, frac: int, places: int) -> None:
    # the same amount written with 6..12 decimal places (trailing zeros beyond the 6th are fine)
    text = f"{whole}.{frac:06d}" + "0" * (places - 6)
    units = whole * UNITS_PER_USDC + frac
    if units == 0:
        with pytest.raises(AmountError):
            parse_usdc(text)
        assert parse_usdc(text, allow_zero=True) == 0
        return
    assert parse_usdc(text) == units
    assert parse_usdc(Decimal(text)) == units
    assert Decimal(usdc_text(parse_usdc(text))) == Decimal(text)


@pytest.mark.parametrize(
    ("value", "units"),
    [
        (250, 250_000_000),
        ("250", 250_000_000),
        ("12.5", 12_500_000),
        (12.5, 12_500_000),
        (0.1, 100_000),  # through the float's shortest repr, not its binary value
        (0.000001, 1),
        ("0.000001", 1),
        ("1e-6", 1),
        ("1E2", 100_000_000),
        (Decimal("3.140000"), 3_140_000),
        ("1000000000000", MAX_AMOUNT_UNITS),
        (10**12, MAX_AMOUNT_UNITS),
    ],
)
def test_parse_usdc_accepts(value: object, units: int) -> None:
    assert parse_usdc(value) == units


def test_usdc_text_examples() -> None:
    assert usdc_text(250_000_000) == "250"
    assert usdc_text(12_500_000) == "12.5"
    assert usdc_text(1) == "0.000001"
    assert usdc_text(0) == "0"
    assert usdc_text(100_000_000_000) == "100000"
    assert usdc_text(MAX_AMOUNT_UNITS) == "1000000000000"


@pytest.mark.parametrize(
    "value",
    [
        -1,
        "-0.000001",
        Decimal("-5"),
        -0.5,
        "NaN",
        "nan",
        "sNaN",
        math.nan,
        Decimal("NaN"),
        "Infinity",
        "-Infinity",
        "inf",
        math.inf,
        Decimal("Infinity"),
        "0.0000001",  # 7 decimals
        "1.1234567",
        1e-7,
        Decimal("0.0000005"),
        "1000000000000.000001",  # one unit above the maximum
        10**12 + 1,
        "1e13",
        1e20,
        True,
        False,
        None,
        [1],
        {"amount": 1},
        b"1",
        "",
        "abc",
        "1,5",
        "0x10",
        "1 USDC",
    ],
)
def test_parse_usdc_rejects(value: object) -> None:
    with pytest.raises(AmountError):
        parse_usdc(value)


@pytest.mark.parametrize("value", [0, "0", "0.000000", Decimal("0"), 0.0, "-0"])
def test_zero_needs_allow_zero(value: object) -> None:
    with pytest.raises(AmountError):
        parse_usdc(value)
    assert parse_usdc(value, allow_zero=True) == 0


@given(
    whole=st.integers(min_value=0, max_value=10**6),
    extra=st.integers(min_value=1, max_value=10**8 - 1).filter(lambda n: n % 10 != 0),
    digits=st.integers(min_value=7, max_value=15),
)
def test_more_than_six_decimals_is_rejected(whole: int, extra: int, digits: int) -> None:
    # a nonzero digit beyond the 6th decimal place (kept within 28 significant digits)
    frac = str(extra).rjust(digits, "0")[-digits:]
    if int(frac[6:]) == 0:
        return
    with pytest.raises(AmountError, match="decimals"):
        parse_usdc(f"{whole}.{frac}", allow_zero=True)


@given(units=st.integers(min_value=MAX_AMOUNT_UNITS + 1, max_value=10**24))
def test_too_large_is_rejected(units: int) -> None:
    with pytest.raises(AmountError, match="too large"):
        parse_usdc(Decimal(usdc_text(units)))


# ---- regressions: long decimals, huge exponents -----------------------------------------------------


@pytest.mark.parametrize("value", ["1.0000000000000000000000000001", "0.99999999999999999999999999999"])
def test_long_decimal_is_rejected_not_rounded(value: str) -> None:
    # a 28-digit context precision would round these to exactly 1 USDC and accept them
    with pytest.raises(AmountError):
        parse_usdc(value)


@pytest.mark.parametrize("value", ["1e999999", "1e999999999", Decimal("9E+999999")])
def test_huge_exponent_is_an_amount_error(value: object) -> None:
    with pytest.raises(AmountError):
        parse_usdc(value)


def test_large_exponent_is_rejected_before_building_the_integer() -> None:
    # Without the exponent guard this would build a 999,999,991-digit integer (minutes of CPU: a
    # cheap request-body DoS through the API); with it, it is an immediate "too large".
    with pytest.raises(AmountError, match="too large"):
        parse_usdc("1e999999990")


@settings(max_examples=500)
@given(
    value=st.one_of(
        st.integers(min_value=-(10**14), max_value=10**14),
        st.decimals(allow_nan=True, allow_infinity=True),
        st.decimals(min_value=0, max_value=10**13, places=6),
        st.decimals(min_value=0, max_value=10, places=7),
        st.sampled_from([Decimal("1E+12"), Decimal("1000000000000.0000000"), Decimal("1." + "0" * 60 + "1")]),
    )
)
def test_fast_path_agrees_with_the_general_one(value: object) -> None:
    """parse_usdc's fast path for ints and short Decimals answers exactly as the general path."""

    def outcome(fn: Callable[[], int]) -> object:
        try:
            return fn()
        except AmountError as exc:
            return str(exc)

    assert outcome(lambda: parse_usdc(value)) == outcome(lambda: money._parse_usdc(value, False))
