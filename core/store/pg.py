"""The PostgreSQL backend's connection: psycopg 3 (sync) behind the subset of apsw's Connection API
the store and its callers use, so one store function runs on either backend.

- SQL keeps SQLite's placeholders: `?`, `?N` and `:name` become `%s` / `%(pN)s` / `%(name)s`, once per
  SQL string (cached); a literal `%` is doubled. String literals, quoted names and comments are left alone.
- Autocommit mode, like apsw: the store's own `BEGIN` / `COMMIT` / `SAVEPOINT` statements delimit
  transactions. `BEGIN IMMEDIATE` (SQLite's "take the write lock now") becomes `BEGIN` (READ COMMITTED:
  a statement that waits for a row lock then sees the latest committed row).
- `changes()` / `total_changes()` count the rows of INSERT/UPDATE/DELETE statements (their row counts,
  RETURNING included), as apsw does.
- Values: a Python bool is bound as an integer (the schema has no boolean columns); a NUMERIC result
  (SUM of a BIGINT, the uint256 NUMERIC(78,0) columns) is read back as an int when it is whole, else a float
  (AVG), as SQLite gives them.
- Errors: every psycopg error is raised as a PostgresError, a subclass of apsw.Error, so the project's
  `except StoreError` (core.store.types) covers both backends; integrity violations (class 23) are
  PostgresConstraintViolation, also an apsw.ConstraintError (= core.store.ConstraintViolation);
  deadlocks and serialization failures are PostgresRetryable (the committer reruns its group).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

import psycopg
from psycopg import pq
from psycopg.adapt import Dumper, Loader

from core.store.types import PostgresConstraintViolation, PostgresError, PostgresRetryable, Uint256Hex

Params = Sequence[Any] | Mapping[str, Any] | None

#: SQLSTATEs after which running the same transaction again may succeed.
RETRYABLE = frozenset({"40P01", "40001"})

_TOKEN = re.compile(
    r"""
    (?P<skip>'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|/\*.*?\*/|::)   # literals, quoted names, comments, casts
  | (?P<num>\?(?P<n>\d+))
  | (?P<pos>\?)
  | :(?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<pct>%)
    """,
    re.VERBOSE | re.DOTALL,
)

_BEGIN = re.compile(r"\s*BEGIN\s+(IMMEDIATE|DEFERRED|EXCLUSIVE)\s*;?\s*$", re.IGNORECASE)
_WRITES = ("INSERT", "UPDATE", "DELETE", "MERGE")


@lru_cache(maxsize=4096)
def translate(sql: str) -> tuple[str, bool]:
    """SQLite placeholders -> psycopg ones. Returns (sql, numbered): numbered when the statement uses
    `?N` (its positional parameters are then passed by name, p1, p2, ...)."""
    if _BEGIN.match(sql):
        return "BEGIN", False
    numbered = False

    def sub(m: re.Match[str]) -> str:
        nonlocal numbered
        if m.group("skip"):
            return m.group("skip").replace("%", "%%")  # psycopg reads % everywhere, literals too
        if m.group("num"):
            numbered = True
            return f"%(p{m.group('n')})s"
        if m.group("pos"):
            return "%s"
        if m.group("name"):
            return f"%({m.group('name')})s"
        return "%%"

    return _TOKEN.sub(sub, sql), numbered


class _BoolAsInt(Dumper):
    """SQLite stores a bool as 1/0; PostgreSQL refuses a boolean for a BIGINT column."""

    oid = psycopg.adapters.types["int8"].oid

    def dump(self, obj: Any) -> bytes:
        return b"1" if obj else b"0"


class _Uint256AsNumeric(Dumper):
    """A uint256 that SQLite keeps as 0x-hex TEXT goes into a NUMERIC(78, 0) column as the number."""

    oid = psycopg.adapters.types["numeric"].oid

    def dump(self, obj: Any) -> bytes:
        return str(int(obj, 16)).encode()


class _NumericAsNumber(Loader):
    """NUMERIC results as SQLite gives them: a whole value as int, else float."""

    def load(self, data: Any) -> int | float:
        text = bytes(data).decode()
        return int(text) if text.lstrip("-").isdigit() else float(text)


def adapt(conn: psycopg.Connection[Any]) -> None:
    """How the store's values go in and come out of `conn` (every connection of the backend)."""
    conn.adapters.register_dumper(bool, _BoolAsInt)
    conn.adapters.register_dumper(Uint256Hex, _Uint256AsNumeric)
    conn.adapters.register_loader("numeric", _NumericAsNumber)


def wrap_error(exc: psycopg.Error) -> PostgresError:
    """The store's class for a psycopg error (the original is its __cause__)."""
    state = exc.sqlstate or ""
    message = str(exc).strip() or type(exc).__name__
    if state.startswith("23"):
        return PostgresConstraintViolation(message, sqlstate=state)
    if state in RETRYABLE:
        return PostgresRetryable(message, sqlstate=state)
    return PostgresError(message, sqlstate=state)


class Cursor:
    """The result of one statement: rows as tuples (fetchall, fetchone, iteration)."""

    __slots__ = ("_cur",)

    def __init__(self, cur: psycopg.Cursor[Any]) -> None:
        self._cur = cur

    def _rows(self) -> bool:
        return self._cur.pgresult is not None and self._cur.pgresult.status == pq.ExecStatus.TUPLES_OK

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._cur.fetchall() if self._rows() else []

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._cur.fetchone() if self._rows() else None

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.fetchall())

    @property
    def description(self) -> Any:
        return self._cur.description


class PostgresConnection:
    """One psycopg connection with the apsw-like surface of core.store.Conn (see the module docstring)."""

    def __init__(self, url: str, *, durable: bool = True, location: str | None = None) -> None:
        try:
            raw: psycopg.Connection[Any] = psycopg.connect(url, autocommit=True)
        except psycopg.Error as exc:
            raise wrap_error(exc) from exc
        adapt(raw)
        self._attach(raw, location or url, owned=True)
        # Said either way (not left to the server's default): durable commits wait for the WAL flush, as
        # SQLite's synchronous=FULL; the indexer's may return before it (a crash loses the last few
        # commits, never consistency: its checkpoint is in the same transaction as its rows).
        self.execute(f"SET synchronous_commit = {'on' if durable else 'off'}")

    @classmethod
    def borrowing(cls, raw: psycopg.Connection[Any], location: str) -> PostgresConnection:
        """The store's surface over a connection someone else owns (a pool's, adapted with `adapt`):
        dropping it does not close that connection."""
        conn = cls.__new__(cls)
        conn._attach(raw, location, owned=False)
        return conn

    def _attach(self, raw: psycopg.Connection[Any], location: str, *, owned: bool) -> None:
        self._conn = raw
        #: The URL it was opened from (core.store.database.database_of).
        self.location = location
        self._owned = owned
        self._changes = 0
        self._total = 0
        self._lock = threading.Lock()  # a connection is used by one thread at a time (committer hand-offs)

    @property
    def raw(self) -> psycopg.Connection[Any]:
        """The psycopg connection (core.store only)."""
        return self._conn

    def _params(self, sql: str, params: Params) -> tuple[str, Params]:
        text, numbered = translate(sql)
        if numbered and params is not None and not isinstance(params, Mapping):
            params = {f"p{i}": v for i, v in enumerate(params, start=1)}
        return text, params

    def _count(self, cur: psycopg.Cursor[Any]) -> None:
        status = cur.statusmessage or ""
        if status.startswith(_WRITES):
            n = max(cur.rowcount, 0)
            self._changes = n
            self._total += n

    def execute(self, sql: str, params: Params = None) -> Cursor:
        text, bound = self._params(sql, params)
        cur = self._conn.cursor()
        try:
            if bound is None or (not isinstance(bound, Mapping) and len(bound) == 0 and "%s" not in text):
                cur.execute(text.replace("%%", "%") if "%%" in text else text, prepare=False)  # type: ignore[arg-type]
            else:
                cur.execute(text, bound)  # type: ignore[arg-type]
        except psycopg.Error as exc:
            raise wrap_error(exc) from exc
        self._count(cur)
        return Cursor(cur)

    def executemany(self, sql: str, seq: Iterable[Params]) -> None:
        text, numbered = translate(sql)
        rows: Iterable[Any] = seq
        if numbered:
            rows = ({f"p{i}": v for i, v in enumerate(r, start=1)} if not isinstance(r, Mapping) else r for r in seq)  # type: ignore[arg-type]
        cur = self._conn.cursor()
        try:
            cur.executemany(text, rows)  # type: ignore[arg-type]
        except psycopg.Error as exc:
            raise wrap_error(exc) from exc
        n = max(cur.rowcount, 0)
        self._changes = n
        self._total += n

    def changes(self) -> int:
        """Rows written by the last INSERT/UPDATE/DELETE."""
        return self._changes

    def total_changes(self) -> int:
        """Rows written by every INSERT/UPDATE/DELETE on this connection."""
        return self._total

    @property
    def filename(self) -> str:
        """The database's identity, as apsw's `filename` is a file's (caches keyed by database)."""
        return self.location

    def getautocommit(self) -> bool:
        """apsw's name for "no transaction is open"."""
        return not self.in_transaction

    @property
    def in_transaction(self) -> bool:
        return self._conn.info.transaction_status != pq.TransactionStatus.IDLE

    @property
    def failed(self) -> bool:
        """An error aborted the open transaction (only ROLLBACK [TO SAVEPOINT] is accepted now)."""
        return self._conn.info.transaction_status == pq.TransactionStatus.INERROR

    @property
    def broken(self) -> bool:
        """The session is gone (server restart, network): only a new connection can go on."""
        return self._conn.broken or self._conn.closed

    @property
    def closed(self) -> bool:
        return self._conn.closed

    def close(self) -> None:
        self._conn.close()

    def __del__(self) -> None:
        # Dropped without close() (apsw connections may be): close quietly, as apsw does, rather than
        # leave psycopg's ResourceWarning.
        conn = getattr(self, "_conn", None)
        if conn is not None and getattr(self, "_owned", False) and not conn.closed:
            conn.close()

    def __repr__(self) -> str:
        return f"<PostgresConnection {self.location.split('@')[-1]}>"
