"""core.dashboard over a real SQLite file: sessions and the operator check (access), what an owner sees
(owner) and what the operator sees and does (operator). Rows are written by the features' own code
(core.wallets, core.checkout.orders, core.audit, core.outbox) wherever it exists."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import apsw
import pytest

from core import audit, decisions, figures, outbox, wallets
from core.checkout import orders
from core.dashboard import access, operator, owner
from core.dashboard.owner import LedgerFilter
from core.errors import ServiceError
from core.keys import Caller, hash_api_key, new_api_key
from core.store import Database, connect, projections, transaction
from core.store import checkout as checkout_store
from core.store import dashboard as store
from core.store import outbox as outbox_store
from core.store import wallets as wallet_store

USDC = 1_000_000
DAY = 86_400.0
NOW = 1_800_000_000.0  # 2027-01-15T08:00:00Z
GATEWAY = "0x" + "6a" * 20


@pytest.fixture()
def conn(database: Database) -> apsw.Connection:
    return database.connect()


def _account(conn: apsw.Connection, *names: str) -> tuple[str, str, list[wallet_store.AgentRow]]:
    """A new account with one key and agents named `names`: (key, account id, agents)."""
    key = new_api_key()
    agents = []
    with transaction(conn):
        first = wallets.register(
            conn,
            account_id=None,
            new_key_hash=hash_api_key(key),
            name=names[0],
            specialty="email",
            referral_code=None,
            now=NOW,
        )
        agents.append(first)
        for n in names[1:]:
            agents.append(
                wallets.register(
                    conn,
                    account_id=first.account_id,
                    new_key_hash=None,
                    name=n,
                    specialty="email",
                    referral_code=None,
                    now=NOW,
                )
            )
    return key, first.account_id, agents


def _caller(conn: apsw.Connection, key: str) -> Caller:
    row = wallet_store.get_api_key(conn, hash_api_key(key))
    assert row is not None
    return Caller(row.key_hash, row.account_id, row.agent_id)


# ---- access: sessions, CSRF, the operator check ----------------------------------------------------------


def ledger_csv_pages(
    conn: apsw.Connection, agents_: list, f: LedgerFilter, page: int = 5000
) -> Iterator[list[list[str]]]:
    """Every page of the export, as the dashboard's CSV route reads them (owner.ledger_csv_page in turn)."""
    before = None
    while True:
        rows, before = owner.ledger_csv_page(conn, agents_, f, before, page)
        if rows:
            yield rows
        if before is None:
            return


def test_a_session_is_stored_by_hash_follows_its_key_and_ends(conn: apsw.Connection) -> None:
    key, account, _ = _account(conn, "a")
    with transaction(conn):
        token, viewer = access.sign_in(conn, key, NOW)
    assert access.TOKEN_RE.fullmatch(token) and viewer.caller.account_id == account and not viewer.operator
    # only the token's hash is stored, never the token or the key
    dump = "\n".join(str(r) for r in conn.execute("SELECT * FROM dashboard_sessions").fetchall())
    assert token not in dump and key not in dump and access.token_hash(token) in dump
    seen = access.viewer(conn, token, NOW + 10)
    assert seen is not None and seen.csrf == viewer.csrf and seen.caller == viewer.caller
    assert access.viewer(conn, token, NOW + access.SESSION_TTL) is None  # expired
    assert access.viewer(conn, token[:-1] + ("A" if token[-1] != "A" else "B"), NOW) is None
    assert access.viewer(conn, None, NOW) is None and access.viewer(conn, "not-a-token", NOW) is None
    # the key is revoked: its session is worth nothing at once
    with transaction(conn):
        assert wallet_store.revoke_api_key(conn, hash_api_key(key), NOW)
    assert access.viewer(conn, token, NOW + 10) is None
    with transaction(conn):
        access.sign_out(conn, token)
    assert conn.execute("SELECT COUNT(*) FROM dashboard_sessions").fetchall()[0][0] == 0


@pytest.mark.parametrize("bad", ["", "aglk_" + "0" * 32, "aglk_short", "Bearer aglk_" + "a" * 32, "x" * 5000])
def test_sign_in_refuses_a_key_that_is_not_one_and_writes_nothing(conn: apsw.Connection, bad: str) -> None:
    _account(conn, "a")
    with pytest.raises(ServiceError) as info, transaction(conn):
        access.sign_in(conn, bad, NOW)
    assert (info.value.status, info.value.code) == (401, "invalid_api_key")
    assert conn.execute("SELECT COUNT(*) FROM dashboard_sessions").fetchall()[0][0] == 0


def test_sign_in_prunes_expired_sessions(conn: apsw.Connection) -> None:
    key, _, _ = _account(conn, "a")
    with transaction(conn):
        access.sign_in(conn, key, NOW)
        access.sign_in(conn, key, NOW + 1)
    with transaction(conn):
        access.sign_in(conn, key, NOW + access.SESSION_TTL + 0.5)  # the first has expired, the second not
    assert conn.execute("SELECT COUNT(*) FROM dashboard_sessions").fetchall()[0][0] == 2


def test_csrf_tokens_compare_exactly() -> None:
    assert access.csrf_ok("abc", "abc")
    assert not access.csrf_ok("abc", "abd") and not access.csrf_ok("abc", None) and not access.csrf_ok("abc", "")


def test_an_operator_key_is_one_issued_with_operator_and_require_operator_is_the_one_check(
    conn: apsw.Connection,
) -> None:
    key, account, _ = _account(conn, "a")
    operator_key = new_api_key()
    with transaction(conn):
        operator_account, agent = wallets.issue_key(
            conn, hash_api_key(operator_key), NOW, operator=True, new_account=True
        )
    assert agent is None and operator_account != account
    owner_caller, operator_caller = _caller(conn, key), _caller(conn, operator_key)
    assert access.is_operator(conn, operator_caller) and not access.is_operator(conn, owner_caller)
    access.require_operator(conn, operator_caller)
    with pytest.raises(ServiceError) as info:
        access.require_operator(conn, owner_caller)
    assert (info.value.status, info.value.code) == (403, "operator_key_required")
    with transaction(conn):
        _, viewer = access.sign_in(conn, operator_key, NOW)
    assert viewer.operator
    with transaction(conn):
        wallet_store.revoke_api_key(conn, hash_api_key(operator_key), NOW)
    assert not access.is_operator(conn, operator_caller)  # a revoked operator key opens nothing


def test_the_scope_admin_is_not_the_operator_flag(conn: apsw.Connection) -> None:
    """A key with every scope ('admin' included: NULL scopes, as every key issued before scopes, or all
    four named) is no operator key; an operator key stays one whatever its scopes."""
    key, account, _ = _account(conn, "a")  # scopes NULL: every scope
    named = new_api_key()
    narrow_operator = new_api_key()
    with transaction(conn):
        wallets.issue_key(conn, hash_api_key(named), NOW, account_id=account, scopes="read log spend admin")
        wallets.issue_key(conn, hash_api_key(narrow_operator), NOW, scopes="read", operator=True, new_account=True)
    for k in (key, named):
        with transaction(conn):
            _, viewer = access.sign_in(conn, k, NOW)
        assert viewer.caller.has_scope("admin") and not viewer.operator
        with pytest.raises(ServiceError) as info:
            access.require_operator(conn, viewer.caller)
        assert (info.value.status, info.value.code) == (403, "operator_key_required")
    with transaction(conn):
        _, viewer = access.sign_in(conn, narrow_operator, NOW)
    assert viewer.operator and not viewer.caller.has_scope("admin")
    access.require_operator(conn, viewer.caller)


def test_signing_in_needs_the_read_scope(conn: apsw.Connection) -> None:
    _, account, _ = _account(conn, "a")
    log_only = new_api_key()
    with transaction(conn):
        wallets.issue_key(conn, hash_api_key(log_only), NOW, account_id=account, scopes="log")
    sessions = conn.execute("SELECT count(*) FROM dashboard_sessions").fetchall()[0][0]
    with pytest.raises(ServiceError) as info, transaction(conn):
        access.sign_in(conn, log_only, NOW)
    assert (info.value.status, info.value.code) == (403, "insufficient_scope")
    assert conn.execute("SELECT count(*) FROM dashboard_sessions").fetchall()[0][0] == sessions


# ---- owner views ---------------------------------------------------------------------------------------


def test_an_account_key_sees_its_agents_an_agent_key_only_its_own_and_nobody_another_account(
    conn: apsw.Connection,
) -> None:
    key, _, (a, b) = _account(conn, "a", "b")
    other_key, _, (stranger,) = _account(conn, "s")
    agent_key = new_api_key()
    with transaction(conn):
        wallets.issue_key(conn, hash_api_key(agent_key), NOW, agent_uuid=b.uuid)
    caller = _caller(conn, key)
    assert [x.wallet for x in owner.visible_agents(conn, caller)] == [a.wallet, b.wallet]
    assert [x.wallet for x in owner.visible_agents(conn, _caller(conn, agent_key))] == [b.wallet]
    assert owner.agent(conn, caller, a.wallet) == a
    for wallet, who in ((stranger.wallet, caller), (a.wallet, _caller(conn, agent_key)), ("agl_000000000000", caller)):
        with pytest.raises(ServiceError) as info:
            owner.agent(conn, who, wallet)
        assert (info.value.status, info.value.code) == (404, "agent_not_found")
    assert [x.wallet for x in owner.visible_agents(conn, _caller(conn, other_key))] == [stranger.wallet]


def _earn(conn: apsw.Connection, agent: wallet_store.AgentRow, amount: int, source: str | None, at: float) -> None:
    with transaction(conn):
        wallets.earn(conn, agent, amount, source, at)


def _settled(
    conn: apsw.Connection, agent: wallet_store.AgentRow, token: int, job: str, amount: int, released_at: float | None
) -> None:
    """An indexed on-chain payout to the agent's NFT (and, with `released_at`, the order it paid)."""
    with transaction(conn):
        if not conn.execute("SELECT 1 FROM providers WHERE agent_uuid = ?", (agent.uuid,)).fetchall():
            conn.execute(
                "INSERT INTO providers (agent_uuid, self_wallet, owner_address, token_id, linked_at)"
                " VALUES (?, ?, ?, ?, 0)",
                (agent.uuid, "0x" + f"{token:040x}", "0x" + "22" * 20, token),
            )
        conn.execute(
            "INSERT INTO payouts (chain_id, tx_hash, log_index, block_number, ref, token_id, payer, amount, owner_cut,"
            " agent_cut, service_cut, referral_cut, owner, self_wallet)"
            " VALUES (31337, ?, 0, ?, ?, ?, ?, ?, 0, 0, 0, 0, '', '')",
            ("0x" + job[2:4] * 32, int(job[2:4], 16), job, token, GATEWAY, amount),
        )
    if released_at is None:
        return
    sid = "cs_" + job[2:8]
    with transaction(conn):
        checkout_store.insert_session(
            conn,
            checkout_store.SessionRow(
                sid, "kh", "complete_in_progress", [], {}, agent.uuid, amount, None, None, job, "0x" + "33" * 20,
                None, None, released_at + 3600, released_at, released_at,
            ),
        )  # fmt: skip
        order = orders.create_order(
            conn,
            session_id=sid,
            job_id=job,
            provider_uuid=agent.uuid,
            provider_token_id=token,
            buyer_address="0x" + "33" * 20,
            amount=amount,
            deadline=int(released_at) + 3600,
            funding_tx="0xf0",
            now=released_at,
        )
        for to_state in ("completed", "released"):
            orders.transition(conn, order.id, to_state, actor="chain", now=released_at)


def test_earnings_per_day_and_by_source_sum_reported_referral_and_settled(conn: apsw.Connection) -> None:
    _, _, (a, b) = _account(conn, "a", "b")
    with transaction(conn):  # c is referred by a: a gets referral credits
        c = wallets.register(
            conn,
            account_id=None,
            new_key_hash="cc" * 32,
            name="c",
            specialty="email",
            referral_code=a.referral_code,
            now=NOW,
        )
    _earn(conn, a, 100 * USDC, "gumroad", NOW - 2 * DAY)
    _earn(conn, b, 50 * USDC, "gumroad", NOW)
    _earn(conn, b, 20 * USDC, "stripe", NOW)
    _earn(conn, a, 7 * USDC, "old", NOW - 40 * DAY)  # before the chart's window: by source only
    _earn(conn, c, 200 * USDC, "x", NOW)  # a's referral credit: 0.5% = 1 USDC
    _settled(conn, a, 5, "0x" + "a1" * 32, 250 * USDC, released_at=NOW - DAY)
    _settled(conn, a, 5, "0x" + "a2" * 32, 30 * USDC, released_at=None)  # a payout with no order: undated
    e = owner.earnings(conn, [a, b], NOW, {"PaymentGateway": GATEWAY})
    assert len(e.days) == owner.CHART_DAYS and e.days[-1] == "2027-01-15" and e.days[0] == "2026-12-17"
    daily = dict(zip(e.days, e.reported, strict=True))
    assert daily["2027-01-13"] == 100 * USDC and daily["2027-01-15"] == 70 * USDC + 1 * USDC
    assert dict(zip(e.days, e.settled, strict=True))["2027-01-14"] == 250 * USDC
    assert sum(e.settled) == 250 * USDC and e.undated_settled == 30 * USDC and e.settled_total == 280 * USDC
    by = {s.source: (s.amount, s.count, s.settled) for s in e.by_source}
    assert by == {
        "gumroad": (150 * USDC, 2, False),
        "stripe": (20 * USDC, 1, False),
        "old": (7 * USDC, 1, False),
        "referral": (1 * USDC, 1, False),
        "settled: PaymentGateway": (280 * USDC, 2, True),
    }
    assert e.by_source[0].source == "settled: PaymentGateway"  # largest first
    assert e.reported_total == 178 * USDC
    # the totals are the wallet API's: reported is totalEarned's off-chain part, settled its on-chain part
    summaries = {s.agent.wallet: s for s in owner.agents(conn, _caller_of(conn, a))}
    assert summaries[a.wallet].balance.total_earned + summaries[b.wallet].balance.total_earned == e.reported_total
    assert summaries[a.wallet].settled == e.settled_total


def test_earnings_are_folded_incrementally_and_equal_a_fresh_fold(conn: apsw.Connection, tmp_path: Path) -> None:
    _, _, (a, b) = _account(conn, "a", "b")
    _earn(conn, a, 10 * USDC, "x", NOW - DAY)
    first = owner.earnings(conn, [a, b], NOW, {})
    assert [(s.source, s.amount) for s in first.by_source] == [("x", 10 * USDC)]
    for i in range(5):
        _earn(conn, a if i % 2 else b, (i + 1) * USDC, "y" if i % 2 else "x", NOW)
    with transaction(conn):
        wallets.spend(conn, a, USDC, "ads", NOW)  # not an earning
    again = owner.earnings(conn, [a, b], NOW, {})  # only the new rows are read
    owner._FOLDED.clear()
    fresh = owner.earnings(conn, [a, b], NOW, {})
    assert again == fresh
    assert {s.source: (s.amount, s.count) for s in fresh.by_source} == {"x": (19 * USDC, 4), "y": (6 * USDC, 2)}
    assert fresh.reported[-1] == 15 * USDC and fresh.reported[-2] == 10 * USDC
    # another database with the same agent ids folds on its own
    other = connect(tmp_path / "other.db")
    with transaction(other):
        other.execute("INSERT INTO accounts VALUES (?, 0)", (a.account_id,))
        wallet_store.insert_agent(other, a)
    assert owner.earnings(other, [a], NOW, {}).by_source == []


def _earning_with_id(conn: apsw.Connection, like: int, new_id: int, gross: int, at: float) -> None:
    """A copy of ledger row `like` under id `new_id`: how a row whose id was taken before another's
    looks once it commits after it (several processes on PostgreSQL take ids at INSERT)."""
    names = (
        "agent_uuid, kind, amount, owner_delta, self_delta, balance_after, owner_cut, agent_cut, service_cut,"
        " referral_cut, source, reinvested_delta"
    )
    with transaction(conn):
        conn.execute(
            f"INSERT INTO ledger (id, gross, created_at, {names}) SELECT ?, ?, ?, {names} FROM ledger WHERE id = ?",  # noqa: S608
            (new_id, gross, at, like),
        )


def test_an_earning_whose_smaller_id_commits_after_a_larger_one_is_still_counted(conn: apsw.Connection) -> None:
    _, _, (a,) = _account(conn, "a")
    _earn(conn, a, 10 * USDC, "x", NOW - DAY)
    first = int(conn.execute("SELECT max(id) FROM ledger").fetchall()[0][0])
    assert owner.earnings(conn, [a], NOW, {}).reported_total == 10 * USDC
    _earning_with_id(conn, first, first + 10, 2 * USDC, NOW)  # committed first, the larger id
    assert owner.earnings(conn, [a], NOW, {}).reported_total == 12 * USDC
    _earning_with_id(conn, first, first + 5, 3 * USDC, NOW)  # committed second, the smaller id
    # before: the fold had moved past first + 10 and never read first + 5 (12 USDC for ever)
    assert owner.earnings(conn, [a], NOW, {}).reported_total == 15 * USDC
    later = NOW + owner.SETTLE_AFTER + 1  # all settled now: folded for good, and still each counted once
    assert owner.earnings(conn, [a], later, {}).reported_total == 15 * USDC
    assert owner.earnings(conn, [a], later, {}).reported_total == 15 * USDC
    owner._FOLDED.clear()
    assert owner.earnings(conn, [a], later, {}) == owner.earnings(conn, [a], later, {})


def _caller_of(conn: apsw.Connection, agent: wallet_store.AgentRow) -> Caller:
    return Caller("kh", agent.account_id, None)


def test_the_ledger_filters_pages_and_exports_every_row_as_safe_csv(conn: apsw.Connection) -> None:
    _, _, (a, b) = _account(conn, "=cmd()", "b")
    for i in range(7):
        _earn(conn, a if i % 2 else b, (i + 1) * USDC, "=HYPERLINK(1)" if i == 3 else "shop", NOW - i * DAY)
    with transaction(conn):
        wallets.spend(conn, a, USDC, "ads", NOW)
    page = owner.ledger(conn, [a, b], LedgerFilter(), limit=3)
    assert [line.row.id for line in page.lines] == [8, 7, 6] and page.next_before == 6
    rest = owner.ledger(conn, [a, b], LedgerFilter(before=page.next_before), limit=10)
    assert [line.row.id for line in rest.lines] == [5, 4, 3, 2, 1] and rest.next_before is None
    only_a = owner.ledger(conn, [a, b], LedgerFilter(wallet=a.wallet, kind="earn"))
    assert {line.wallet for line in only_a.lines} == {a.wallet} and {line.row.kind for line in only_a.lines} == {"earn"}
    assert len(only_a.lines) == 3
    days = owner.ledger(conn, [a, b], LedgerFilter(since=date(2027, 1, 13), until=date(2027, 1, 14)))
    assert sorted(line.row.gross for line in days.lines) == [2 * USDC, 3 * USDC]  # i = 1, 2
    assert [line.row.source for line in owner.ledger(conn, [a, b], LedgerFilter(source="ads")).lines] == ["ads"]
    with pytest.raises(ServiceError):
        owner.ledger(conn, [a, b], LedgerFilter(kind="steal"))
    # the export: every row over several pages, newest first, a formula never left to a spreadsheet
    pages = list(ledger_csv_pages(conn, [a, b], LedgerFilter(), page=3))
    assert [len(p) for p in pages] == [3, 3, 2]
    rows = [r for p in pages for r in p]
    text = io.StringIO()
    csv.writer(text).writerows([owner.CSV_HEADER, *rows])
    parsed = list(csv.DictReader(io.StringIO(text.getvalue())))
    assert [r["id"] for r in parsed] == ["8", "7", "6", "5", "4", "3", "2", "1"]
    assert parsed[0]["kind"] == "spend" and parsed[0]["amount_usdc"] == "-1" and parsed[0]["source"] == "ads"
    assert {r["agent"] for r in parsed if r["wallet"] == a.wallet} == {"'=cmd()"}
    assert "'=HYPERLINK(1)" in {r["source"] for r in parsed}
    earn = next(r for r in parsed if r["id"] == "1")
    assert (earn["gross_usdc"], earn["toll_usdc"], earn["amount_usdc"]) == ("1", "0.02", "0.98")
    # a filter the other agents do not pass exports nothing
    assert list(ledger_csv_pages(conn, [a, b], LedgerFilter(source="none"))) == []


def test_orders_show_for_the_provider_and_for_the_buyer_account_with_their_chain(conn: apsw.Connection) -> None:
    key, _, (seller,) = _account(conn, "seller")
    buyer_key, _, (buyer_agent,) = _account(conn, "buyer")
    _settled(conn, seller, 9, "0x" + "b1" * 32, 250 * USDC, released_at=NOW)
    buyer_hash = hash_api_key(buyer_key)
    with transaction(conn):
        conn.execute("UPDATE checkout_sessions SET key_hash = ?", (buyer_hash,))
    mine = owner.orders(conn, _caller(conn, key), [seller])
    theirs = owner.orders(conn, _caller(conn, buyer_key), [buyer_agent])
    assert [o.role for o in mine] == ["provider"] and [o.role for o in theirs] == ["buyer"]
    view = mine[0].order
    assert view["status"] == "released" and [h["to_state"] for h in view["history"]] == [
        "created",
        "completed",
        "released",
    ]
    assert [h["audit_id"] for h in view["history"]] == [e["audit_id"] for e in view["audit_chain"]["entries"]]
    assert view["totals"]["total"] == 250 * USDC and "buyer_details" not in view
    stranger_key, _, (stranger,) = _account(conn, "x")
    assert owner.orders(conn, _caller(conn, stranger_key), [stranger]) == []


def test_decisions_are_the_agents_latest_entries_with_what_verify_needs(conn: apsw.Connection) -> None:
    _, _, (a, b) = _account(conn, "a", "b")
    _, _, (stranger,) = _account(conn, "s")
    for i, agent in enumerate([a, b, stranger, a]):
        with transaction(conn):
            decisions.log_decision(
                conn,
                Caller("k", agent.account_id, None),
                agent.uuid,
                decisions.Decision(
                    event_type="routine" if i else "critical",
                    content_hash=f"{i:064x}",
                    model_id="m",
                    model_version="1",
                    evidence=(("text", "f" * 64),) if i == 0 else (),
                ),
                webhook=None,
                verify_base="http://x",
                rate_limit=1000,
                now=NOW + i,
            )
    got = owner.decisions(conn, [a, b])
    assert [(d.audit_id, d.wallet, d.seq) for d in got] == [(4, a.wallet, 2), (2, b.wallet, 1), (1, a.wallet, 1)]
    assert got[-1].tier == "critical" and got[-1].model == "m 1"
    entry = conn.execute("SELECT chain_hash FROM audit_log WHERE id = 4").fetchall()[0][0]
    assert got[0].chain_hash == entry


def test_memory_pages_by_key_and_the_brain_ranks_where_to_list(conn: apsw.Connection) -> None:
    _, _, (a,) = _account(conn, "a")
    with transaction(conn):
        for i in range(5):
            wallets.put_memory(conn, a, f"k{i}", json.dumps({"v": "<script>x</script>"}), NOW)
        wallets.update_brain(conn, a, "sold", "youtube", 10 * USDC, None, NOW)
    first = owner.memory(conn, a, None, None, limit=3)  # byte order: the service's brain:v1 first
    assert [m.key for m in first.entries] == ["brain:v1", "k0", "k1"] and first.next_cursor == "k1"
    rest = owner.memory(conn, a, None, first.next_cursor, limit=3)
    assert [m.key for m in rest.entries] == ["k2", "k3", "k4"] and rest.next_cursor is None
    assert owner.memory(conn, a, "k4", None).entries[0].value == '{"v": "<script>x</script>"}'
    brain = owner.brain(conn, a)
    assert brain.niches["youtube"].sold == 1 and brain.weights[0][0] == "youtube"


# ---- operator views --------------------------------------------------------------------------------------


def test_network_counts_keys_accounts_and_orders(conn: apsw.Connection) -> None:
    key, _, (a,) = _account(conn, "a")
    _account(conn, "b")
    _earn(conn, a, 100 * USDC, "s", NOW)
    with transaction(conn):
        wallets.issue_key(conn, "ad" * 32, NOW, operator=True, new_account=True)
        wallet_store.revoke_api_key(conn, hash_api_key(key), NOW)
    n = operator.network(conn)
    assert (n.agents, n.accounts, n.active_keys, n.operator_keys, n.revoked_keys) == (2, 3, 2, 1, 1)
    assert (n.earned, n.tolls) == (100 * USDC, 2 * USDC)


def test_indexer_state_from_the_checkpoint_and_the_in_process_status(conn: apsw.Connection) -> None:
    assert figures.indexer(conn, 31337).state == "starting"
    with transaction(conn):
        conn.execute(
            "INSERT INTO sync_state (chain_id, block_number, block_hash, head_number, finalized_number, updated_at)"
            " VALUES (31337, 100, '0x', 103, 90, ?)",
            (NOW,),
        )
    ix = figures.indexer(conn, 31337)
    assert (ix.state, ix.seen, ix.final, ix.head, ix.lag) == ("synced", 100, 90, 103, 3)

    class Status:
        head, halted, last_error, node_ok = 120, "", "node slow", True

    behind = figures.indexer(conn, 31337, Status())
    assert (behind.state, behind.lag, behind.last_error) == ("behind", 20, "node slow")
    Status.halted = "reorg below final block 90"
    assert figures.indexer(conn, 31337, Status()).state == "halted"
    # a halt stored with the checkpoint (main's indexer.sync): seen with no in-process indexer too
    with transaction(conn):
        projections.set_halt(conn, 31337, "fork below final block 90", NOW)
    stored = figures.indexer(conn, 31337)
    assert (stored.state, stored.halted) == ("halted", "fork below final block 90")
    with transaction(conn):
        projections.clear_halt(conn, 31337)
    assert figures.indexer(conn, 31337).state == "synced"


def _dead(conn: apsw.Connection, url: str) -> str:
    with transaction(conn):
        event_id = outbox.enqueue_webhook(
            conn, event="e", source="order:o1", url=url, secret="s3cr3t-value", payload={"a": 1}, now=NOW
        )
        row_id = conn.execute("SELECT id FROM outbox WHERE event_id = ?", (event_id,)).fetchall()[0][0]
        for _ in outbox.RETRY_DELAYS:
            outbox_store.record_attempt(
                conn, row_id, ok=False, status=500, error="HTTP 500", now=NOW, delays=outbox.RETRY_DELAYS
            )
    return event_id


def test_the_outbox_view_shows_dead_letters_without_their_url_or_secret_and_resets_them(conn: apsw.Connection) -> None:
    one = _dead(conn, "https://hooks.example.com/services/T0/B0/SECRETPATH")
    two = _dead(conn, "https://other.example.org/x")
    with transaction(conn):
        outbox.enqueue_webhook(conn, event="e", source="s", url="https://a.example/h", secret="s", payload={}, now=NOW)
    o = figures.outbox(conn, NOW + 1)
    assert (o.counts.pending, o.counts.dead_letters, o.counts.held) == (1, 2, 0)
    assert [d.event_id for d in o.dead] == [two, one] and o.dead[1].host == "hooks.example.com:443"
    assert "SECRETPATH" not in repr(o.dead) and "s3cr3t" not in repr(o.dead)
    assert [h.host for h in o.hosts] == ["a.example:443"]
    for bad, code in (("evt_nope", "invalid_field"), ("evt_" + "0" * 32, "dead_letter_not_found")):
        with pytest.raises(ServiceError) as info, transaction(conn):
            operator.reset_dead_letters(conn, bad, NOW)
        assert info.value.code == code
    with transaction(conn):
        assert operator.reset_dead_letters(conn, one, NOW + 2) == 1
    assert figures.outbox(conn, NOW + 2).counts.dead_letters == 1
    with transaction(conn):
        assert operator.reset_dead_letters(conn, None, NOW + 3) == 1
    after = figures.outbox(conn, NOW + 3)
    assert (after.counts.pending, after.counts.dead_letters) == (3, 0)


@pytest.mark.parametrize(
    ("chain_id", "explorer"),
    [(8453, "https://basescan.org/tx/"), (84532, "https://sepolia.basescan.org/tx/"), (31337, None)],
)
def test_anchors_link_to_the_networks_block_explorer(
    conn: apsw.Connection, chain_id: int, explorer: str | None
) -> None:
    with transaction(conn):
        for i in range(3):
            audit.append(conn, stream="s", kind="k", payload={"i": i}, chain=audit.order_rule, now=NOW)
        for idx, size in enumerate((1, 3)):
            conn.execute(
                "INSERT INTO anchors (chain_id, idx, tree_size, root, anchorer, block_number, tx_hash)"
                " VALUES (?, ?, ?, '0xr', '0xa', ?, ?)",
                (chain_id, idx, size, 10 + idx, f"0x{idx:064x}"),
            )
    a = figures.anchors(conn, chain_id)
    assert (a.log_size, a.count, a.anchored_size) == (3, 2, 3)
    assert [v.anchor.idx for v in a.recent] == [1, 0]
    if explorer is None:
        assert a.recent[0].explorer_url is None
    else:
        assert a.recent[0].explorer_url == explorer + f"0x{1:064x}"


def test_contracts_owe_what_the_index_says(conn: apsw.Connection) -> None:
    with transaction(conn):
        for job, status, amount in (("0x01", "funded", 5), ("0x02", "disputed", 7), ("0x03", "released", 100)):
            conn.execute(
                "INSERT INTO gateway_jobs (chain_id, job_id, buyer, provider_token_id, amount, deadline, status,"
                " funded_tx, funded_block) VALUES (1, ?, '0xb', 1, ?, 0, ?, '0x', 1)",
                (job, amount, status),
            )
        conn.execute(
            "INSERT INTO escrow_jobs (chain_id, job_id, caller, provider_token_id, amount, expires_at, status,"
            " created_tx,"
            " created_block) VALUES (1, '0x09', '0xc', 1, 11, 0, 'locked', '0x', 1)"
        )
        conn.execute("INSERT INTO credits (chain_id, contract, payee, amount) VALUES (1, 'AgentPayouts', '0xp', 3)")
        conn.execute("INSERT INTO credits (chain_id, contract, payee, amount) VALUES (2, 'AgentPayouts', '0xp', 99)")
    views = {
        c.name: c
        for c in operator.contracts(
            conn, 1, {"PaymentGateway": "0xg", "AgentEscrow": "0xe", "AgentPayouts": "0xp", "MockUSDC": "0xu"}
        )
    }
    assert views["PaymentGateway"].owes == 12 and views["AgentEscrow"].owes == 11 and views["AgentPayouts"].owes == 3
    assert views["MockUSDC"].owes is None and views["PaymentGateway"].address == "0xg"


def test_keys_are_issued_once_and_revoked_by_their_hash_prefix_never_the_operators_own(conn: apsw.Connection) -> None:
    _, account, (a,) = _account(conn, "a")
    ops = Caller("ad" * 32, "ops", None)
    with transaction(conn):
        key, acc, agent = operator.issue_key(conn, NOW, agent_uuid=a.uuid)
        fresh, new_acc, _ = operator.issue_key(conn, NOW)
    assert (acc, agent) == (account, a.uuid) and new_acc != account
    assert not store.key_is_operator(conn, hash_api_key(key))  # the view never issues operator keys
    for kwargs, code in (
        ({"account_id": "not-a-uuid"}, "invalid_field"),
        ({"account_id": "00000000-0000-0000-0000-000000000000"}, "not_found"),
        ({"account_id": account, "agent_uuid": a.uuid}, "invalid_field"),
    ):
        with pytest.raises(ServiceError) as info, transaction(conn):
            operator.issue_key(conn, NOW, **kwargs)  # type: ignore[arg-type]
        assert info.value.code == code
    h = hash_api_key(key)
    with transaction(conn):
        access.sign_in(conn, key, NOW)
    for ref, code in (("zz", "invalid_field"), ("0" * 12, "key_not_found")):
        with pytest.raises(ServiceError) as info, transaction(conn):
            operator.revoke_key(conn, ref, NOW, ops)
        assert info.value.code == code
    with pytest.raises(ServiceError) as info, transaction(conn):
        operator.revoke_key(conn, h[:12], NOW, Caller(h, account, None))
    assert info.value.code == "cannot_revoke_own_key"
    with transaction(conn):
        row = operator.revoke_key(conn, operator.key_id(h), NOW, ops)
    assert row.key_hash == h and wallet_store.get_api_key(conn, h) is None
    assert conn.execute("SELECT COUNT(*) FROM dashboard_sessions WHERE key_hash = ?", (h,)).fetchall()[0][0] == 0
    with pytest.raises(ServiceError) as info, transaction(conn):
        operator.revoke_key(conn, h, NOW, ops)
    assert info.value.code == "key_revoked"
    listed = {k.key_hash: k for k in operator.keys(conn)}
    assert listed[h].revoked_at == NOW and listed[hash_api_key(fresh)].revoked_at is None
