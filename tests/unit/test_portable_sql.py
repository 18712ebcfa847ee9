"""The SQL of core/store's feature modules means the same on SQLite and on PostgreSQL 15.

A scan of the string literals (f-strings included, their {...} parts read as one opaque word) of
core/store/*.py: each rule below is a form SQLite accepts and PostgreSQL refuses or reads otherwise,
with the portable form to write instead. The parametrized self-test shows each rule catching an
example of its form and letting the portable form through. The SQLite backend's own modules and the
files still being fixed are named in the allow-lists below, each with its reason.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from core.store import Conn, connect
from core.store import dashboard as dashboard_store
from core.store import hire as hire_store

STORE = Path(__file__).resolve().parents[2] / "core" / "store"

#: The SQLite backend itself: connections, PRAGMAs, BEGIN IMMEDIATE, WAL checkpoints, the reorg journal's
#: triggers (rowid, json_array). They are one backend's by design; the PostgreSQL backend has its own.
BACKEND_MODULES = {
    "__init__.py": "re-exports only",
    "types.py": "the driver's names",
    "backend.py": "the protocol of what differs between the backends",
    "database.py": "picks the backend",
    "sqlite.py": "the SQLite backend: connections, PRAGMAs, BEGIN IMMEDIATE, WAL checkpoints, the journal's triggers",
    # The migrations written so far are SQLite DDL (WITHOUT ROWID, table rebuilds); the PostgreSQL
    # schema is their translation, kept by the PostgreSQL backend. New migrations stay plain.
    "schema.py": "SQLite DDL of the migrations so far",
    # The PostgreSQL backend: its catalog queries, PL/pgSQL and DDL are PostgreSQL's by design.
    "pg.py": "the PostgreSQL connection (placeholder translation)",
    "pg_ddl.py": "translates SQLite DDL (WITHOUT ROWID) to PostgreSQL's",
    "pg_reorg.py": "the undo journal as a PL/pgSQL trigger (pg_index, CREATE TRIGGER ... INSERT OR UPDATE)",
    "pg_schema.py": "PostgreSQL DDL of the baseline",
}

#: rowid is SQLite's hidden column: these public cursors and tie-breaks need an explicit column in the
#: schema (orders' page position, wallet_agents' insertion order) before they can run on PostgreSQL.
ROWID_SITES = {("orders.py", "orders_of_provider"), ("dashboard.py", "agents_of_account")}


# ---- reading SQL out of the source ----------------------------------------------------------------

EXPR = "__expr__"  # what an f-string's {...} reads as


@dataclass(frozen=True)
class Literal:
    file: str
    function: str  # the enclosing function ("" at module level)
    line: int
    text: str


def _text(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else EXPR for v in node.values
        )
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def literals(path: Path) -> Iterator[Literal]:
    """Every string literal of the module except docstrings (f-strings whole, not their pieces)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docs = _docstrings(tree)

    def walk(node: ast.AST, function: str) -> Iterator[Literal]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from walk(child, child.name)
            elif isinstance(child, ast.JoinedStr):
                yield Literal(path.name, function, child.lineno, _text(child) or "")
            elif isinstance(child, ast.Constant) and isinstance(child.value, str) and id(child) not in docs:
                yield Literal(path.name, function, child.lineno, child.value)
            else:
                yield from walk(child, function)

    yield from walk(tree, "")


def driver_calls(path: Path) -> Iterator[tuple[int, str]]:
    """(line, name) of calls of SQLite-only connection methods."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Attribute) and node.attr in {"last_insert_rowid", "setbusytimeout", "wal_checkpoint"}:
            yield node.lineno, node.attr


# ---- the rules --------------------------------------------------------------------------------------

KEYWORDS = frozenset(
    {
        "select",
        "from",
        "where",
        "and",
        "or",
        "not",
        "null",
        "is",
        "in",
        "case",
        "when",
        "then",
        "else",
        "end",
        "as",
        "on",
        "join",
        "left",
        "inner",
        "cross",
        "using",
        "group",
        "by",
        "order",
        "limit",
        "offset",
        "having",
        "union",
        "all",
        "distinct",
        "exists",
        "between",
        "like",
        "true",
        "false",
        "asc",
        "desc",
        "returning",
        "values",
        "set",
        "do",
        "nothing",
        "update",
        "insert",
        "into",
        "delete",
        "conflict",
        "excluded",
        "filter",
    }
)


def _groups(sql: str, opener: str) -> Iterator[tuple[int, str]]:
    """(end, inside) of each parenthesised group that starts with `opener` (a regex ending at '(')."""
    for m in re.finditer(opener, sql, re.IGNORECASE):
        depth, i = 1, m.end()
        while i < len(sql) and depth:
            depth += {"(": 1, ")": -1}.get(sql[i], 0)
            i += 1
        yield i, sql[m.end() : i - 1]


def _top_level(inside: str) -> str:
    """`inside` with every nested parenthesised group blanked out."""
    out, depth = [], 0
    for ch in inside:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def scalar_min_max(sql: str) -> bool:
    """max(a, b) / min(a, b): SQLite's scalar functions. PostgreSQL has GREATEST/LEAST (SQLite has
    not): write a CASE expression."""
    return any("," in _top_level(inside) for _, inside in _groups(sql, r"\b(?:min|max)\s*\("))


def boolean_sum(sql: str) -> bool:
    """sum(x IS NULL), sum(status = 'x'): PostgreSQL cannot sum a boolean. Write
    COUNT(*) FILTER (WHERE ...) or sum(CASE WHEN ... THEN 1 ELSE 0 END)."""
    for _, inside in _groups(sql, r"\b(?:sum|total|avg)\s*\("):
        top = _top_level(inside).strip()
        if not re.match(r"case\b", top, re.IGNORECASE) and re.search(
            r"[=<>]|\b(?:is|and|or|not|in|like|between)\b", top, re.IGNORECASE
        ):
            return True
    return False


def integer_as_boolean(sql: str) -> bool:
    """WHERE active, AND success, CASE WHEN success THEN: PostgreSQL wants a boolean there and the
    columns are INTEGER. Write `= 1`."""
    if re.fullmatch(r"\s*[a-z]{1,3}\.[a-z][a-z_]*\s*", sql):
        return True  # a lone aliased column: a WHERE term to be joined with AND (`where.append("s.active")`)
    for m in re.finditer(
        r"\b(?:where|and|or|when|not)\s+((?:\w+\.)?(\w+))\s*(?=\bthen\b|\band\b|\bor\b|\border\b|\bgroup\b|\blimit\b|\)|$)",
        sql,
        re.IGNORECASE,
    ):
        if m.group(2).lower() not in KEYWORDS and m.group(1) != EXPR and not m.group(2).isdigit():
            return True
    return False


def unaliased_subquery(sql: str) -> bool:
    """FROM (SELECT ...) without a name: PostgreSQL 15 refuses it. Write FROM (SELECT ...) AS name."""
    for end, inside in _groups(sql, r"\b(?:from|join)\s*\("):
        if not re.match(r"\s*(?:select|with)\b|\s*" + EXPR, inside, re.IGNORECASE):
            continue  # a table function or a parenthesised join, not a subquery
        after = re.match(r"\s*(?:as\s+)?(\w+)", sql[end:], re.IGNORECASE)
        if after is None or after.group(1).lower() in KEYWORDS:
            return True
    return False


def ambiguous_upsert(sql: str) -> bool:
    """ON CONFLICT ... DO UPDATE SET n = n + 1: in PostgreSQL a bare column there could be the table's
    or excluded's, and it refuses it as ambiguous. Name the table: SET n = t.n + excluded.n."""
    m = re.search(r"\bdo\s+update\s+set\b(.*?)(?:\breturning\b|$)", sql, re.IGNORECASE | re.DOTALL)
    if m is None:
        return False
    body = m.group(1)
    parts = re.split(r"\bwhere\b", body, maxsplit=1, flags=re.IGNORECASE)
    sets, where = parts[0], parts[1] if len(parts) > 1 else ""
    expressions = [a.split("=", 1)[1] for a in _split_top(sets) if "=" in a] + [where]
    for expr in expressions:
        for t in re.finditer(r"(?<![.:\w@$])([A-Za-z_]\w*)\b(?!\s*[.(])", re.sub(r"'[^']*'", "''", expr)):
            if t.group(1).lower() not in KEYWORDS and t.group(1) != EXPR:
                return True
    return False


def _split_top(text: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def _pattern(regex: str) -> Callable[[str], bool]:
    compiled = re.compile(regex, re.IGNORECASE)
    return lambda sql: compiled.search(sql) is not None


#: name -> (finds the form, why and what to write instead)
RULES: dict[str, tuple[Callable[[str], bool], str]] = {
    "numbered parameter": (_pattern(r"\?\d"), "?1 is SQLite's: write ? or :name"),
    "INSERT OR": (_pattern(r"\binsert\s+or\s+\w+"), "write INSERT ... ON CONFLICT (...) DO NOTHING / DO UPDATE"),
    "REPLACE INTO": (_pattern(r"^\s*replace\s+into\b"), "write INSERT ... ON CONFLICT (...) DO UPDATE"),
    "UPDATE OR": (_pattern(r"\bupdate\s+or\s+\w+"), "SQLite's conflict clause: refuse or check explicitly"),
    "last_insert_rowid": (_pattern(r"last_insert_rowid"), "write INSERT ... RETURNING id"),
    "json functions": (_pattern(r"\bjson_(?:each|array|extract|object|group_\w+|tree)\b"), "SQLite's JSON1"),
    "instr": (_pattern(r"\binstr\s*\("), "PostgreSQL has strpos: write replace(s, ?, '') != s"),
    "date functions": (
        _pattern(r"'unixepoch'|\b(?:strftime|julianday|datetime|unixepoch|date|time)\s*\("),
        "SQLite's date functions: compute in Python or in arithmetic both share",
    ),
    "SQLite-only functions": (
        _pattern(r"\b(?:ifnull|iif|typeof|group_concat|printf|randomblob|total|zeroblob|likelihood)\s*\("),
        "write coalesce, CASE, ... (what both have)",
    ),
    "GLOB or LIKE": (_pattern(r"\b(?:glob|like)\b"), "LIKE folds ASCII case on SQLite only; GLOB is SQLite's"),
    "WITHOUT ROWID": (_pattern(r"\bwithout\s+rowid\b"), "SQLite's table option (schema.py's migrations only)"),
    "AUTOINCREMENT": (_pattern(r"\bautoincrement\b"), "SQLite's"),
    "PRAGMA": (_pattern(r"\bpragma\b"), "SQLite's; backend settings belong in the backend's module"),
    "BEGIN IMMEDIATE": (_pattern(r"\bbegin\s+(?:immediate|exclusive|deferred)\b"), "use store.transaction"),
    "rowid": (_pattern(r"\b(?:_rowid_|oid|rowid)\b"), "SQLite's hidden column: name a real column"),
    "CROSS JOIN ... ON": (
        _pattern(r"\bcross\s+join\s+\w+(?:\s+(?:as\s+)?(?!on\b)\w+)?\s+on\b"),
        "PostgreSQL takes no ON after CROSS JOIN: put the condition in WHERE",
    ),
    "scalar min/max": (scalar_min_max, scalar_min_max.__doc__ or ""),
    "sum of a boolean": (boolean_sum, boolean_sum.__doc__ or ""),
    "integer as boolean": (integer_as_boolean, integer_as_boolean.__doc__ or ""),
    "subquery without alias": (unaliased_subquery, unaliased_subquery.__doc__ or ""),
    "ambiguous upsert column": (ambiguous_upsert, ambiguous_upsert.__doc__ or ""),
}


def violations(sql: str) -> list[str]:
    return [name for name, (finds, _) in RULES.items() if finds(sql)]


def scanned_files() -> list[Path]:
    return [p for p in sorted(STORE.glob("*.py")) if p.name not in BACKEND_MODULES]


# ---- the scan ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", scanned_files(), ids=lambda p: p.name)
def test_store_sql_is_portable(path: Path) -> None:
    found = []
    for lit in literals(path):
        for name in violations(lit.text):
            if name == "rowid" and (lit.file, lit.function) in ROWID_SITES:
                continue
            found.append(
                f"{lit.file}:{lit.line} ({lit.function or 'module'}): {name}: {RULES[name][1]}\n    {lit.text}"
            )
    found += [f"{path.name}:{line}: conn.{name}() is SQLite's driver" for line, name in driver_calls(path)]
    assert not found, "SQLite-only SQL:\n" + "\n".join(found)


def test_the_scan_reads_the_store() -> None:
    """The scan is not vacuous: it finds the feature modules and their SQL."""
    names = {p.name for p in scanned_files()}
    assert {"wallets.py", "hire.py", "dashboard.py", "orders.py", "projections.py", "marketplace.py"} <= names
    texts = [lit.text for lit in literals(STORE / "wallets.py")]
    assert any("UPDATE balances SET" in t for t in texts)
    assert not any("Callers own the transaction" in t for t in texts)  # the docstring is prose, not SQL


def test_allow_lists_name_real_files_and_sites() -> None:
    for name in BACKEND_MODULES:
        assert (STORE / name).exists(), f"{name} is allow-listed but gone: drop it from the list"
    for file, function in ROWID_SITES:
        assert any(lit.function == function and "rowid" in violations(lit.text) for lit in literals(STORE / file)), (
            f"{file}:{function} no longer uses rowid: drop it from ROWID_SITES"
        )


# ---- the rules' self-test ---------------------------------------------------------------------------

#: rule -> (SQLite-only forms it must catch, portable forms it must let through)
EXAMPLES: dict[str, tuple[list[str], list[str]]] = {
    "numbered parameter": (
        ["UPDATE balances SET owner_balance = owner_balance + ?1 WHERE agent_uuid = ?6"],
        ["UPDATE balances SET owner_balance = owner_balance + :owner WHERE agent_uuid = ?"],
    ),
    "INSERT OR": (
        ["INSERT OR IGNORE INTO hire_jobs (id) VALUES (?)", "insert or replace into blocks (n) values (?)"],
        ["INSERT INTO hire_jobs (id) VALUES (?) ON CONFLICT DO NOTHING"],
    ),
    "REPLACE INTO": (["REPLACE INTO blocks (n) VALUES (?)"], ["SELECT replace(key, ?, '') FROM memories"]),
    "UPDATE OR": (["UPDATE OR IGNORE orders SET status = ?"], ["UPDATE orders SET status = ? WHERE id = ?"]),
    "last_insert_rowid": (["SELECT last_insert_rowid()"], ["INSERT INTO ledger (kind) VALUES (?) RETURNING id"]),
    "json functions": (
        ["SELECT value FROM json_each(?)", "SELECT json_array(a, b)"],
        ["SELECT id FROM outbox WHERE id IN (?, ?)"],
    ),
    "instr": (
        ["SELECT 1 FROM memories WHERE instr(key, ?) > 0"],
        ["SELECT 1 FROM memories WHERE replace(key, ?, '') != key"],
    ),
    "date functions": (
        ["SELECT date(h.at, 'unixepoch') FROM h", "SELECT strftime('%s', 'now')", "SELECT datetime(at) FROM t"],
        ["SELECT floor(h.at / 86400) FROM order_history h", "SELECT updated_at FROM t"],
    ),
    "SQLite-only functions": (
        ["SELECT ifnull(a, 0) FROM t", "SELECT iif(a, 1, 2) FROM t", "SELECT total(amount) FROM t"],
        ["SELECT coalesce(a, 0), total_earned FROM balances"],
    ),
    "GLOB or LIKE": (
        ["SELECT 1 FROM t WHERE name LIKE ?", "SELECT 1 FROM t WHERE k GLOB 'a*'"],
        ["SELECT liked FROM t"],
    ),
    "WITHOUT ROWID": (["CREATE TABLE t (k TEXT PRIMARY KEY) WITHOUT ROWID"], ["CREATE TABLE t (k TEXT PRIMARY KEY)"]),
    "AUTOINCREMENT": (["CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT)"], ["CREATE TABLE t (id INTEGER)"]),
    "PRAGMA": (["PRAGMA foreign_keys=ON"], ["SELECT pragmatic FROM t"]),
    "BEGIN IMMEDIATE": (["BEGIN IMMEDIATE"], ["SELECT began FROM t"]),
    "rowid": (
        ["SELECT rowid, id FROM orders ORDER BY rowid DESC", "SELECT * FROM t WHERE _rowid_ = ?"],
        ["SELECT row_id FROM reorg_undo"],
    ),
    "CROSS JOIN ... ON": (
        [
            "SELECT 1 FROM hire_services s CROSS JOIN agents a ON a.token_id = s.token_id",
            "FROM s CROSS JOIN t ON t.x = 1",
        ],
        [
            "SELECT 1 FROM hire_services s CROSS JOIN agents a WHERE a.token_id = s.token_id",
            "FROM s JOIN a ON a.x = s.x",
        ],
    ),
    "scalar min/max": (
        ["SELECT pow(0.5, max(0, ?1 - settled_at))", "UPDATE o SET n = MAX(n, MIN(:until, :now + 5))"],
        ["SELECT max(settled_at), MIN(coalesce(a, b)) FROM t", "SELECT CASE WHEN a < :now THEN :now - a ELSE 0 END"],
    ),
    "sum of a boolean": (
        [
            "SELECT SUM(revoked_at IS NULL) FROM api_keys",
            "SELECT coalesce(sum(status = 'released'), 0) FROM orders",
            "SELECT SUM(held_since IS NOT NULL AND next_attempt_at > ?) FROM outbox",
        ],
        [
            "SELECT SUM(amount), sum(pow(0.5, x / ?)), sum(success * pow(0.5, 1)) FROM t",
            "SELECT SUM(CASE WHEN a = 1 THEN 1 ELSE 0 END), COUNT(*) FILTER (WHERE revoked_at IS NULL) FROM t",
        ],
    ),
    "integer as boolean": (
        [
            "SELECT 1 FROM hire_services WHERE active",
            "UPDATE hire_services SET active = 0 WHERE provider_uuid = ? AND active",
            "SELECT avg(CASE WHEN success THEN response_ms END) FROM hire_samples",
            "SELECT 1 FROM s WHERE s.active AND s.price <= ?",
            "SELECT 1 FROM t WHERE settled_at >= ? AND success ORDER BY settled_at",
            "SELECT 1 FROM t WHERE NOT paused)",
            "s.active",
        ],
        [
            "SELECT 1 FROM hire_services WHERE active = 1 AND (x IS NULL OR x < ?) ORDER BY y",
            "SELECT avg(CASE WHEN success = 1 THEN response_ms END) FROM hire_samples",
            "SELECT 1 FROM t WHERE NOT EXISTS (SELECT 1 FROM d) AND a IN (?)",
            f"SELECT 1 FROM t WHERE {EXPR} ORDER BY a",  # noqa: S608 (an example)
            "s.active = 1",
            "core.store",
        ],
    ),
    "subquery without alias": (
        [
            "SELECT count(*) FROM (SELECT response_ms FROM hire_samples LIMIT ?)",
            "SELECT id, role FROM ( SELECT o.id FROM orders o UNION ALL SELECT 1) ORDER BY updated_at DESC",
            f"SELECT response_ms FROM ({EXPR}) ORDER BY response_ms",  # noqa: S608 (an example)
        ],
        [
            "SELECT count(*) FROM (SELECT response_ms FROM hire_samples LIMIT ?) AS recent",
            "SELECT a FROM (SELECT id FROM drop_listings LIMIT ?) p JOIN drop_listings l ON l.id = p.id",
            "SELECT a FROM t WHERE id IN (SELECT id FROM u)",
        ],
    ),
    "ambiguous upsert column": (
        [
            "INSERT INTO credits (amount) VALUES (?) ON CONFLICT (k) DO UPDATE SET amount = amount + excluded.amount",
            "INSERT INTO r (count) VALUES (1) ON CONFLICT (k) DO UPDATE SET count = r.count + 1 WHERE count < ?"
            " RETURNING count",
        ],
        [
            "INSERT INTO credits (amount) VALUES (?) ON CONFLICT (k) DO UPDATE SET amount = credits.amount"
            " + excluded.amount, note = coalesce(excluded.note, 'x'), active = 1, at = ?",
            "INSERT INTO r (count) VALUES (1) ON CONFLICT (k) DO UPDATE SET count = r.count + 1"
            " WHERE r.count < :limit RETURNING count",
        ],
    ),
}


def test_every_rule_has_examples() -> None:
    assert set(EXAMPLES) == set(RULES)


@pytest.mark.parametrize("rule", sorted(RULES))
def test_rule_catches_its_form(rule: str) -> None:
    bad, good = EXAMPLES[rule]
    for sql in bad:
        assert rule in violations(sql), f"{rule!r} missed: {sql}"
    for sql in good:
        assert rule not in violations(sql), f"{rule!r} flagged a portable form: {sql}"


def test_driver_calls_are_caught(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "def f(conn):\n    conn.execute('INSERT INTO t (a) VALUES (?)', (1,))\n    return conn.last_insert_rowid()\n"
    )
    assert list(driver_calls(module)) == [(3, "last_insert_rowid")]
    assert [lit.text for lit in literals(module)] == ["INSERT INTO t (a) VALUES (?)"]


# ---- the portable forms mean what the SQLite forms they replaced meant ------------------------------


@pytest.fixture
def sqlite() -> Iterator[Conn]:
    conn = connect(":memory:")
    yield conn
    conn.close()


def test_utc_day_is_sqlites_date(sqlite: Conn) -> None:
    """dashboard.settled_by_day's day number names the day date(at, 'unixepoch') names, to the
    millisecond SQLite rounds to (a time 0.5 ms before midnight is the next day for both)."""
    rng = random.Random(17)
    midnights = [d * 86400 for d in rng.sample(range(1, 40_000), 2_000)]
    times = [0.0, 86399.9994, 86399.9995, 86400.0, 1763942399.99949, 1763942399.9995, 1.7e9]
    times += [m + rng.uniform(-0.002, 0.002) for m in midnights] + [rng.uniform(0, 4e9) for _ in range(5_000)]
    expr = dashboard_store._UTC_DAY.replace("h.at", "?")
    for at in times:
        sqlite_date, day = sqlite.execute(f"SELECT date(?, 'unixepoch'), {expr}", (at, at)).fetchall()[0]
        assert (dashboard_store._EPOCH + timedelta(days=int(day))).isoformat() == sqlite_date, at  # type: ignore[arg-type]


def test_replace_finds_what_instr_found(sqlite: Conn) -> None:
    """wallets.list_memories' containment test: replace(key, q, '') != key exactly when instr(key, q) > 0."""
    keys = ["notes", "run:1", "brain:x", "Notes", "naïve/été", "a%b_c", "", "aaa", "ab" * 20]
    queries = ["no", "N", "run:", "ï", "été", "%", "_", "aa", "b", "ba" * 5, "zz", "é"]
    for key in keys:
        for q in queries:
            old, new = sqlite.execute("SELECT instr(?1, ?2) > 0, replace(?1, ?2, '') != ?1", (key, q)).fetchall()[0]
            assert old == new, (key, q)


def test_age_case_is_scalar_max(sqlite: Conn) -> None:
    """hire.sample_stats' age: the CASE gives what max(0, :now - settled_at) gave, type included."""
    for now, settled in [(100.0, 40.0), (100.0, 100.0), (100.0, 250.5), (100, 40.0), (1.7e9, 1.7e9 - 0.25)]:
        age = hire_store._AGE.replace("settled_at", "?2").replace(":now", "?1")
        old, new = sqlite.execute(f"SELECT max(0, ?1 - ?2), {age}", (now, settled)).fetchall()[0]
        assert (old, type(old)) == (new, type(new)), (now, settled)
