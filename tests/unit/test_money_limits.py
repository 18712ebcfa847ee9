"""The largest amounts the service accepts, summed through the real store on both backends: every total
over many rows (the service's, an account's, the operator's) stays exact past int64 (core.store.sums)."""

from __future__ import annotations

import re
from pathlib import Path

import apsw
import pytest

from core import wallets
from core.checkout import orders
from core.dashboard import operator
from core.keys import hash_api_key, new_api_key
from core.money import MAX_AMOUNT_UNITS
from core.store import Database, transaction
from core.store import checkout as checkout_store
from core.store import hire as hire_store
from core.store import wallets as store
from core.store.types import Uint256Hex

INT64_MAX = 2**63 - 1
CHAIN = 31337
NOW = 1_800_000_000.0


@pytest.fixture()
def conn(database: Database) -> apsw.Connection:
    return database.connect()


def _register(conn: apsw.Connection, referrer: store.AgentRow | None = None) -> store.AgentRow:
    with transaction(conn):
        return wallets.register(
            conn,
            account_id=None,
            new_key_hash=hash_api_key(new_api_key()),
            name="a",
            specialty="email",
            referral_code=None if referrer is None else referrer.referral_code,
            now=NOW,
        )


def test_the_operators_figures_sum_past_int64(conn: apsw.Connection) -> None:
    """Orders, hires and what each contract owes, over rows whose total passes int64, a uint256 price
    past int64 among them (0x-hex TEXT on SQLite, NUMERIC on PostgreSQL)."""
    provider = _register(conn)
    with transaction(conn):
        conn.execute(
            "INSERT INTO providers (agent_uuid, self_wallet, owner_address, token_id, linked_at)"
            " VALUES (?, ?, ?, 1, 0)",
            (provider.uuid, "0x" + "44" * 20, "0x" + "22" * 20),
        )
        for n in range(10):
            sid, job = f"cs_{n}", f"0x{n:064x}"
            checkout_store.insert_session(
                conn,
                checkout_store.SessionRow(
                    sid, "kh", "complete_in_progress", [], {}, provider.uuid, MAX_AMOUNT_UNITS, None, None, job,
                    "0x" + "33" * 20, None, None, NOW + 3600, NOW, NOW,
                ),
            )  # fmt: skip
            orders.create_order(
                conn,
                session_id=sid,
                job_id=job,
                provider_uuid=provider.uuid,
                provider_token_id=1,
                buyer_address="0x" + "33" * 20,
                amount=MAX_AMOUNT_UNITS,
                deadline=int(NOW) + 3600,
                funding_tx="0xf0",
                now=NOW,
            )
            hire_store.insert_job(conn, _hire(f"hire_{n:024x}", provider.uuid, MAX_AMOUNT_UNITS))
        for n in range(2):
            conn.execute(
                "INSERT INTO gateway_jobs (chain_id, job_id, buyer, provider_token_id, amount, deadline, status,"
                " funded_tx, funded_block) VALUES (?, ?, '0xb', 1, ?, 0, 'funded', '0x', 1)",
                (CHAIN, f"0x{n}", INT64_MAX),
            )
            conn.execute(
                "INSERT INTO escrow_jobs (chain_id, job_id, caller, provider_token_id, amount, expires_at, status,"
                " created_tx, created_block) VALUES (?, ?, '0xc', 1, ?, 0, 'locked', '0x', 1)",
                (CHAIN, f"0x{n}", INT64_MAX),
            )
            conn.execute(
                "INSERT INTO credits (chain_id, contract, payee, amount) VALUES (?, 'AgentPayouts', ?, ?)",
                (CHAIN, f"0x{n}", INT64_MAX),
            )
        for n, price in ((1, Uint256Hex(hex(2**200))), (2, INT64_MAX)):
            conn.execute(
                "INSERT INTO listings (chain_id, listing_id, token_id, seller, asking_price, floor_price,"
                " earnings_at_listing, expires_at, status, price, listed_block, updated_block)"
                " VALUES (?, ?, 1, '0xs', 1, 1, 0, 0, 'committed', ?, 1, 1)",
                (CHAIN, n, price),
            )
    n = operator.network(conn)
    assert n.orders == {"created": (10, 10 * MAX_AMOUNT_UNITS)}
    assert n.hires == {("standard", "charged"): (10, 10 * MAX_AMOUNT_UNITS)}
    deployed = {
        name: f"0x{i:040x}"
        for i, name in enumerate(("PaymentGateway", "AgentEscrow", "AgentPayouts", "AgentMarketplace"))
    }
    owes = {c.name: c.owes for c in operator.contracts(conn, CHAIN, deployed)}
    assert owes["PaymentGateway"] == owes["AgentEscrow"] == owes["AgentPayouts"] == 2 * INT64_MAX
    assert owes["AgentMarketplace"] == 2**200 + INT64_MAX


def _hire(job_id: str, provider_uuid: str, amount: int) -> hire_store.JobRow:
    return hire_store.JobRow(
        id=job_id, kind="standard", status="charged", provider_uuid=provider_uuid, provider_token_id=1,
        service_type="summarize", caller_uuid=None, caller_address=None, self_dealing=False,
        amount=amount, held_owner=None, held_self=None, input_sha256="00" * 32, idem_scope=None, idem_key=None,
        idem_attempt=None, outcome="success", output=None, output_sha256=None, output_cid=None, error_code=None,
        error_message=None, response_ms=1, created_tx=None, expires_at=None, settle_tx=None, settle_attempts=0,
        settle_error=None, next_settle_at=None, final=True, caller_webhook_url=None, caller_webhook_secret=None,
        created_at=NOW, updated_at=NOW,
    )  # fmt: skip


def test_the_stores_sums_of_money_are_exact_sums() -> None:
    """A plain sum() raises past int64 on SQLite: every sum of money in the store is written exact_sum
    (core.store.sums). The plain ones left add a hire service's samples: successes, recency weights
    (REAL) and milliseconds. The migrations (schema.py) sum one transfer row per agent, once."""
    store_dir = Path(__file__).resolve().parents[2] / "core" / "store"
    plain = {
        path.name: len(re.findall(r"(?<![a-z_])sum\(", path.read_text(), re.IGNORECASE))
        for path in store_dir.glob("*.py")
        if path.name not in ("sums.py", "schema.py")
    }
    assert {name: n for name, n in plain.items() if n} == {"hire.py": 4}
