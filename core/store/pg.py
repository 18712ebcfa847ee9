"""The PostgreSQL backend (core.store.backend): its connection, psycopg 3 (sync) behind the subset of
apsw's Connection API the store and its callers use, so one store function runs on either backend.

- SQL keeps SQLite's placeholders: `?`, `?N` and `:name` become `%s` / `%(pN)s` / `%(name)s`, once per
  SQL string (cached); a literal `%` is doubled. String literals, quoted names and comments are left alone.
- Autocommit mode, like apsw: the store's own `BEGIN` / `COMMIT` / `SAVEPOINT` statements delimit
  transactions. A write transaction (`begin_write`) takes the database's one write lock right after its
  BEGIN, in the same round trip (module docstring of core.store.backend): PostgreSQL's form of SQLite's
  BEGIN IMMEDIATE. READ COMMITTED: each statement after it sees every commit of the writers before it.
- Every session bounds its waits (connect, lock, statement, idle in a transaction; TCP keepalives and a
  user timeout for a cut network), so a lost server shows as an error within seconds, never as a hang.
- `changes()` / `total_changes()` count the rows of INSERT/UPDATE/DELETE statements (their row counts,
  RETURNING included), as apsw does.
- Values: a Python bool is bound as an integer (the schema has no boolean columns); a NUMERIC result
  (SUM of a BIGINT, the uint256 NUMERIC(78,0) columns) is read back as an int when it is whole, else a float
  (AVG), as SQLite gives them.
- Errors: every psycopg error is raised as a PostgresError, a subclass of apsw.Error, so the project's
  `except StoreError` (core.store.types) covers both backends; integrity violations (class 23) are
  PostgresConstraintViolation, also an apsw.ConstraintError (= core.store.ConstraintViolation);
  deadlocks and serialization failures are PostgresRetryable (the committer reruns its group); a lost or
  refused connection, a server shutting down and a wait past its limit are PostgresUnavailable
  (core.store.types.DatabaseUnavailable: the API's 503).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Literal, TypeVar, cast

import psycopg
from psycopg import pq
from psycopg.adapt import Dumper, Loader
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from core.store import exact, pg_reorg, pg_schema
from core.store.reads import APPLICATION_NAME, POOL_WAIT, READ_POOL_SIZE, RECONNECT_GIVE_UP, Reads
from core.store.types import (
    CommitOutcomeUnknown,
    Conn,
    PostgresConstraintViolation,
    PostgresError,
    PostgresRetryable,
    PostgresUnavailable,
    StoreError,
    Uint256Hex,
)

Params = Sequence[Any] | Mapping[str, Any] | None
T = TypeVar("T")

#: SQLSTATEs after which running the same transaction again may succeed.
RETRYABLE = frozenset({"40P01", "40001"})
#: SQLSTATEs of a server out of reach for now (besides class 08, connection exceptions, and class 57P,
#: the server shutting down or starting): too many connections, a lock or statement past its time limit,
#: a session ended for idling in a transaction.
UNAVAILABLE = frozenset({"53300", "55P03", "57014", "25P03"})

log = logging.getLogger("agentledger.store")

#: Seconds a writer whose session was lost during COMMIT keeps asking a new session whether it committed.
COMMIT_OUTCOME_WAIT = 10.0
#: Seconds to wait for the server to accept a connection (libpq's least is 2).
CONNECT_TIMEOUT = 3
#: A writer waits at most this long (ms) for the write lock, i.e. for the writer before it to commit.
LOCK_TIMEOUT_MS = 10_000
#: A statement runs at most this long (ms): a bug shows as an error, never as a hang.
STATEMENT_TIMEOUT_MS = 60_000
#: The server ends a session idle in an open transaction this long (ms): a stalled process (a stop signal,
#: a debugger) cannot keep the write lock from every other writer.
IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000
#: A cut network (no reset, no reply) is noticed within seconds instead of the kernel's 15 minutes: TCP
#: keepalives on an idle session, and a limit on how long sent data may stay unacknowledged.
TCP_SETTINGS = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
    "tcp_user_timeout": 10_000,
}
#: Seconds past its statement_timeout a statement may take before this process cuts its session: the
#: server ends a statement at statement_timeout, so one that has not come back by then means a server or a
#: network that no longer answers (a stopped or hung host, packets dropped with no reset) and the client
#: would otherwise wait for ever (a cut network) or until TCP gives up.
STATEMENT_GRACE = 2.0
#: The advisory lock every write transaction takes right after BEGIN (the two-int form: its key space is
#: apart from the one-bigint keys of pg_schema.MIGRATION_LOCK and the process locks' hashtext names).
WRITE_LOCK = (0x61676C00, 1)  # "agl", 1

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

#: Statements that end a transaction (the write lock and its transaction id with it).
_ENDS = frozenset({"COMMIT", "ROLLBACK"})
#: BEGIN of a write transaction: the write lock and the transaction's id in the same round trip (no
#: parameters: one simple query of two statements).
WRITE_BEGIN = f"BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK[0]}, {WRITE_LOCK[1]}), txid_current()"
_TRY_WRITE_BEGIN = f"BEGIN; SELECT pg_try_advisory_xact_lock({WRITE_LOCK[0]}, {WRITE_LOCK[1]}), txid_current()"
_BEGIN = re.compile(r"\s*BEGIN\s+(IMMEDIATE|DEFERRED|EXCLUSIVE)\s*;?\s*$", re.IGNORECASE)
_WRITES = ("INSERT", "UPDATE", "DELETE", "MERGE")


@lru_cache(maxsize=4096)
@lru_cache(maxsize=1024)
def _chains_writes(text: str) -> bool:
    """Is `text` a WITH statement with a data-modifying part (core.store.backend.Backend.chains_writes)?"""
    return text.lstrip()[:4].upper() == "WITH" and re.search(r"\b(INSERT|UPDATE|DELETE)\b", text, re.I) is not None


def translate(sql: str) -> tuple[str, bool]:
    """SQLite placeholders -> psycopg ones. Returns (sql, numbered): numbered when the statement uses
    `?N` (its positional parameters are then passed by name, p1, p2, ...)."""
    begin = _BEGIN.match(sql)
    if begin:  # SQLite's BEGIN IMMEDIATE / EXCLUSIVE take the write lock; so does their form here
        return ("BEGIN" if begin.group(1).upper() == "DEFERRED" else WRITE_BEGIN), False
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


def wrap_error(exc: psycopg.Error, *, lost: bool = False) -> PostgresError:
    """The store's class for a psycopg error (the original is its __cause__). `lost`: the connection it
    came from is broken (a server restart, a terminated backend, a cut network)."""
    state = exc.sqlstate or ""
    message = str(exc).strip() or type(exc).__name__
    if state.startswith("23"):
        return PostgresConstraintViolation(message, sqlstate=state)
    if state in RETRYABLE:
        return PostgresRetryable(message, sqlstate=state)
    if lost or state.startswith(("08", "57P")) or state in UNAVAILABLE or _unreachable(exc):
        return PostgresUnavailable(message, sqlstate=state)
    return PostgresError(message, sqlstate=state)


def _unreachable(exc: psycopg.Error) -> bool:
    """An error raised before any server answered: no connection could be made, or it is closed, or the
    pool had none to lend in time (psycopg_pool.PoolTimeout is an OperationalError too)."""
    return isinstance(exc, psycopg.OperationalError) and exc.sqlstate is None


def connect_options(url: str) -> str:
    """The conninfo of a session of the store: `url` with the time limits and TCP settings above. A value the
    URL gives itself wins (its `options` are applied after these, so its `-c lock_timeout=...` holds)."""
    given = conninfo_to_dict(url)
    limits = (
        f"-c lock_timeout={LOCK_TIMEOUT_MS} -c statement_timeout={STATEMENT_TIMEOUT_MS}"
        f" -c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_TIMEOUT_MS}"
    )
    params: dict[str, Any] = {k: v for k, v in TCP_SETTINGS.items() if k not in given}
    if "connect_timeout" not in given:
        params["connect_timeout"] = CONNECT_TIMEOUT
    params["options"] = f"{limits} {given['options']}" if given.get("options") else limits
    return make_conninfo(url, **params)


def statement_timeout_of(url: str) -> float:
    """Seconds of the statement_timeout a session of `url` runs with: its own `-c statement_timeout=`
    option if it gives one (milliseconds, or with a unit: 500ms, 2s, 1min), else STATEMENT_TIMEOUT_MS."""
    options = str(conninfo_to_dict(url).get("options") or "")
    given = re.findall(r"statement_timeout\s*=\s*(\d+)\s*(ms|s|min)?\b", options)
    if not given:
        return STATEMENT_TIMEOUT_MS / 1000
    value, unit = given[-1]
    return int(value) * {"": 0.001, "ms": 0.001, "s": 1.0, "min": 60.0}[unit]


class _Deadlines:
    """The statements in flight on this process's sessions, and a thread that cuts the session of one that
    has not come back STATEMENT_GRACE seconds past its statement_timeout (see STATEMENT_GRACE): it shuts
    the socket down under the waiting call, which then fails as a lost session (PostgresUnavailable), so
    nothing waits longer than a bounded time for the database, whatever happened to it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._busy: dict[int, tuple[float, psycopg.Connection[Any]]] = {}
        self._thread: threading.Thread | None = None

    def enter(self, raw: psycopg.Connection[Any], seconds: float) -> None:
        with self._lock:
            self._busy[id(raw)] = (time.monotonic() + seconds, raw)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="pg-deadlines", daemon=True)
                self._thread.start()

    def leave(self, raw: psycopg.Connection[Any]) -> None:
        with self._lock:
            self._busy.pop(id(raw), None)

    def _watch(self) -> None:
        while True:
            time.sleep(0.25)
            now = time.monotonic()
            with self._lock:
                late = [key for key, (until, _) in self._busy.items() if until < now]
                cut = [self._busy.pop(key)[1] for key in late]
            for raw in cut:
                log.warning("a statement did not come back in time: its database session is cut")
                _cut(raw)


def _cut(raw: psycopg.Connection[Any]) -> None:
    """Shut the session's socket down (its fd stays open: libpq closes it), so a call blocked on it returns."""
    with contextlib.suppress(Exception):
        fd = raw.pgconn.socket
        sock = socket.socket(fileno=os.dup(fd))
        try:
            sock.shutdown(socket.SHUT_RDWR)
        finally:
            sock.close()


_deadlines = _Deadlines()


class Cursor:
    """The result of one statement: rows as tuples (fetchall, fetchone, iteration)."""

    __slots__ = ("_cur",)

    def __init__(self, cur: psycopg.Cursor[Any]) -> None:
        self._cur = cur

    def _rows(self) -> bool:
        return self._cur.pgresult is not None and self._cur.pgresult.status == pq.ExecStatus.TUPLES_OK

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._cur.fetchall() if self._rows() else []

    def last_row(self) -> tuple[Any, ...]:
        """The first row of the last statement's result (a query of several statements)."""
        while self._cur.nextset():
            pass
        row: tuple[Any, ...] | None = self._cur.fetchone()
        assert row is not None
        return row

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._cur.fetchone() if self._rows() else None

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.fetchall())

    @property
    def description(self) -> Any:
        return self._cur.description


class PostgresConnection:
    """One psycopg connection with the apsw-like surface of core.store.Conn (see the module docstring)."""

    #: The store's backend of this connection (core.store.backend.backend_of).
    backend: PostgresBackend

    def __init__(self, url: str, *, durable: bool = True, location: str | None = None) -> None:
        try:
            raw: psycopg.Connection[Any] = psycopg.connect(connect_options(url), autocommit=True)
        except psycopg.Error as exc:
            raise wrap_error(exc, lost=True) from exc
        adapt(raw)
        self._attach(raw, location or url, owned=True, deadline=statement_timeout_of(url) + STATEMENT_GRACE)
        # Said either way (not left to the server's default): durable commits wait for the WAL flush, as
        # SQLite's synchronous=FULL; the indexer's may return before it (a crash loses the last few
        # commits, never consistency: its checkpoint is in the same transaction as its rows).
        self.execute(f"SET synchronous_commit = {'on' if durable else 'off'}")

    @classmethod
    def borrowing(cls, raw: psycopg.Connection[Any], location: str, deadline: float) -> PostgresConnection:
        """The store's surface over a connection someone else owns (a pool's, adapted with `adapt`):
        dropping it does not close that connection."""
        conn = cls.__new__(cls)
        conn._attach(raw, location, owned=False, deadline=deadline)
        return conn

    def _attach(self, raw: psycopg.Connection[Any], location: str, *, owned: bool, deadline: float) -> None:
        self._conn = raw
        #: Seconds a statement may take before the session is cut (_Deadlines).
        self.deadline = deadline
        #: The URL it was opened from (core.store.database.database_of).
        self.location = location
        self._owned = owned
        self._changes = 0
        self._total = 0
        self._lock = threading.Lock()  # a connection is used by one thread at a time (committer hand-offs)
        #: The transaction id of the write transaction begun by `begin_write` and not ended yet (its commit's
        #: outcome can be asked for after the session is lost: PostgresBackend.committed).
        self.write_txid: int | None = None

    @property
    def raw(self) -> psycopg.Connection[Any]:
        """The psycopg connection (core.store only)."""
        return self._conn

    def _params(self, sql: str, params: Params) -> tuple[str, Params]:
        text, numbered = translate(sql)
        if numbered and params is not None and not isinstance(params, Mapping):
            params = {f"p{i}": v for i, v in enumerate(params, start=1)}
        return text, params

    def _count(self, cur: psycopg.Cursor[Any], text: str) -> None:
        status = cur.statusmessage or ""
        if status.startswith(_WRITES):
            n = max(cur.rowcount, 0)
        elif _chains_writes(text):  # a WITH whose parts write: its status is the final SELECT's
            n = max(cur.rowcount, 0) or 1  # at least the one write (what a broken promise is told by)
        else:
            return
        self._changes = n
        self._total += n

    def _failed(self, exc: psycopg.Error) -> PostgresError:
        return wrap_error(exc, lost=self._conn.broken or self._conn.closed)

    def execute(self, sql: str, params: Params = None) -> Cursor:
        text, bound = self._params(sql, params)
        if text in _ENDS:
            self.write_txid = None
        raw = self._conn
        _deadlines.enter(raw, self.deadline)
        try:
            cur = raw.cursor()
            if bound is None or (not isinstance(bound, Mapping) and len(bound) == 0 and "%s" not in text):
                cur.execute(text.replace("%%", "%") if "%%" in text else text, prepare=False)  # type: ignore[arg-type]
            else:
                cur.execute(text, bound)  # type: ignore[arg-type]
        except psycopg.Error as exc:
            raise self._failed(exc) from exc
        finally:
            _deadlines.leave(raw)
        if text is WRITE_BEGIN:
            self.write_txid = int(Cursor(cur).last_row()[1])
            return Cursor(cur)
        self._count(cur, text)
        return Cursor(cur)

    def executemany(self, sql: str, seq: Iterable[Params]) -> None:
        text, numbered = translate(sql)
        rows: Iterable[Any] = seq
        if numbered:
            rows = ({f"p{i}": v for i, v in enumerate(r, start=1)} if not isinstance(r, Mapping) else r for r in seq)  # type: ignore[arg-type]
        raw = self._conn
        _deadlines.enter(raw, self.deadline)
        try:
            cur = raw.cursor()
            cur.executemany(text, rows)  # type: ignore[arg-type]
        except psycopg.Error as exc:
            raise self._failed(exc) from exc
        finally:
            _deadlines.leave(raw)
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


# ---- the backend -----------------------------------------------------------------------------------


def _pg(conn: Conn) -> PostgresConnection:
    """`conn` as what it is on this backend (Conn is typed as SQLite's connection)."""
    return cast(PostgresConnection, conn)


class _NoCheckpoints:
    """PostgreSQL checkpoints on its own."""

    def attach(self) -> None:
        pass

    def detach(self) -> None:
        pass


_EVENT_COLUMNS = "block_number, block_hash, tx_hash, log_index, contract, event, topics, data"
#: The session's staging table of record_events (temporary: never logged, emptied by each move).
_EVENTS_STAGING = (
    "CREATE TEMP TABLE IF NOT EXISTS events_incoming (block_number BIGINT, block_hash TEXT, tx_hash TEXT,"
    " log_index BIGINT, contract TEXT, event TEXT, topics TEXT, data TEXT)"
)
_EVENTS_COPY = f"COPY events_incoming ({_EVENT_COLUMNS}) FROM STDIN"
_EVENTS_MOVE = (
    "WITH moved AS (DELETE FROM events_incoming RETURNING *)"  # noqa: S608 (constants and an int)
    f" INSERT INTO events (chain_id, {_EVENT_COLUMNS}) SELECT {{chain_id}}, {_EVENT_COLUMNS} FROM moved"
    " ON CONFLICT (chain_id, block_number, log_index) DO NOTHING"
)


class PostgresBackend:
    kind: Literal["postgresql"] = "postgresql"
    #: Statements are round trips to a server and the write lock may be another process's: off the loop.
    waits_off_loop = True
    chains_writes = True

    def owns(self, conn: object) -> bool:
        return isinstance(conn, PostgresConnection)

    def connect(self, location: str, *, durable: bool) -> Conn:
        # durable=False: `SET synchronous_commit = off` (a crash may lose the last commits, never corrupt).
        conn = PostgresConnection(location, durable=durable)
        try:
            pg_schema.migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn  # type: ignore[return-value]

    def begin_write(self, conn: Conn, *, wait: bool = True) -> bool:
        if wait:
            conn.execute("BEGIN IMMEDIATE")  # translated to WRITE_BEGIN: it records write_txid
            return True
        got, txid = _pg(conn).execute(_TRY_WRITE_BEGIN).last_row()
        if not got:
            conn.execute("ROLLBACK")
            return False
        _pg(conn).write_txid = int(txid)
        return True

    def commit(self, conn: Conn) -> None:
        """COMMIT. When the session is lost before the answer came, the outcome is asked for on a new one
        (`committed`): returns if the transaction committed after all, raises DatabaseUnavailable if it
        did not, CommitOutcomeUnknown if the server could not tell within COMMIT_OUTCOME_WAIT seconds."""
        txid = _pg(conn).write_txid
        try:
            conn.execute("COMMIT")
        except PostgresUnavailable:
            if txid is None or not _pg(conn).broken:
                raise
            deadline = time.monotonic() + COMMIT_OUTCOME_WAIT
            while True:
                try:
                    outcome = self.committed(_pg(conn).location, txid)
                except PostgresUnavailable:
                    outcome = None
                if outcome is not None:
                    if outcome:
                        log.warning("a COMMIT's answer was lost with its session; the transaction committed")
                        return
                    raise
                if time.monotonic() >= deadline:
                    raise CommitOutcomeUnknown(
                        f"the session was lost during COMMIT and transaction {txid}'s outcome is unknown"
                    ) from None
                time.sleep(0.2)

    def begin_snapshot(self, conn: Conn) -> None:
        # its BEGIN under READ COMMITTED would give each statement its own snapshot
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    def holds_write_lock(self, conn: Conn) -> bool:
        return _pg(conn).write_txid is not None and bool(_pg(conn).in_transaction)

    def write_transaction(self, conn: Conn) -> int | None:
        return _pg(conn).write_txid if self.holds_write_lock(conn) else None

    def aborted(self, conn: Conn) -> bool:
        return bool(_pg(conn).failed)

    def broken(self, conn: Conn) -> bool:
        return bool(_pg(conn).broken)

    def track(self, conn: Conn, table: str) -> None:
        pg_reorg.track(_pg(conn), table)

    def undo(self, conn: Conn, ancestor: int) -> int:
        return pg_reorg.undo(_pg(conn), ancestor)

    def exact_rows(self, conn: Conn, sql: str, params: Sequence[Any] | Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """PostgreSQL's own SUM is exact at any size (a NUMERIC): the query runs with it."""
        return list(conn.execute(exact.native(sql), params).fetchall())

    def checkpointer(self, conn: Conn) -> _NoCheckpoints:
        return _NoCheckpoints()

    def tune_for_indexing(self, conn: Conn) -> None:
        """Nothing: the cache is the server's shared buffers, and the indexer's connection already commits
        asynchronously (durable=False)."""

    def record_events(self, conn: Conn, chain_id: int, rows: Sequence[Sequence[Any]]) -> None:
        """COPY the rows into a staging table of the session, then move them into `events` in one
        statement, which leaves a row already recorded as it is (COPY itself has no ON CONFLICT). Measured
        against executemany of the INSERT: most of a backfill's time in PostgreSQL went to those
        statements, one per event. COPY fires row triggers as INSERT does (events has none: a reorg
        deletes its rows by block number, core.store.reorg)."""
        if not rows:
            return
        pg = _pg(conn)
        raw = pg.raw
        _deadlines.enter(raw, pg.deadline)
        try:
            cur = raw.cursor()
            # in the transaction, every time: a CREATE rolled back with a failed step leaves no table behind
            cur.execute(_EVENTS_STAGING)
            with cur.copy(_EVENTS_COPY) as copy:
                for row in rows:
                    copy.write_row(row)
            cur.execute(_EVENTS_MOVE.format(chain_id=int(chain_id)))
        except psycopg.Error as exc:
            raise pg._failed(exc) from exc
        finally:
            _deadlines.leave(raw)

    def process_lock(self, location: str, name: str) -> AdvisoryLock:
        return AdvisoryLock(location, name)

    def reads(self, conn: Conn, size: int) -> Reads:
        return PooledReads(_pg(conn).location, size=size) if size > 0 else Reads(conn, self)

    def committed(self, location: str, txid: int) -> bool | None:
        """Did the write transaction `txid` commit? Asked on a new session after the one that sent its COMMIT
        was lost before the answer came: True or False once the server knows, None while it is in progress
        (raises PostgresUnavailable while the server cannot be reached)."""
        conn = PostgresConnection(location)
        try:
            (status,) = conn.execute("SELECT txid_status(?)", (txid,)).fetchall()[0]
        finally:
            conn.close()
        if status == "committed":
            return True
        if status == "in progress":
            return None
        return False  # aborted (a transaction in progress at a crash or restart is aborted), or forgotten

    def __repr__(self) -> str:
        return "<PostgreSQL backend>"


class PooledReads(Reads):
    """PostgreSQL: each `fn` on a pooled connection, in a thread of the pool's own executor (as many
    threads as connections, so a thread never waits for a connection)."""

    def __init__(self, url: str, *, size: int = READ_POOL_SIZE) -> None:
        # No connection of its own, and the pool is not opened here: an app that is built and never served
        # (schema, tests) opens nothing.
        self.kind = "postgresql"
        self._url = url
        self._deadline = statement_timeout_of(url) + STATEMENT_GRACE
        self._size = size
        self._pool: Any = None
        self._executor: ThreadPoolExecutor | None = None
        self._opening = threading.Lock()

    def _open(self) -> tuple[Any, ThreadPoolExecutor]:
        with self._opening:
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                def configure(raw: Any) -> None:
                    adapt(raw)
                    raw.execute("SET default_transaction_read_only = on")

                self._pool = ConnectionPool(
                    connect_options(self._url),
                    min_size=1,
                    max_size=self._size,
                    kwargs={"autocommit": True, "application_name": APPLICATION_NAME},
                    configure=configure,
                    num_workers=1,
                    name="agentledger-reads",
                    timeout=POOL_WAIT,
                    reconnect_timeout=RECONNECT_GIVE_UP,
                    open=True,
                )
                self._executor = ThreadPoolExecutor(self._size, thread_name_prefix="agentledger-read")
            assert self._executor is not None
            return self._pool, self._executor

    def _call(self, pool: Any, fn: Callable[[Conn], T]) -> T:
        attempts = self._size + 1  # every pooled session may have died at once (a server restart)
        for attempt in range(1, attempts + 1):
            try:
                raw = pool.getconn()
            except psycopg.Error as exc:  # none to lend within POOL_WAIT (psycopg_pool.PoolTimeout)
                raise wrap_error(exc, lost=True) from exc
            try:
                return fn(PostgresConnection.borrowing(raw, self._url, self._deadline))  # type: ignore[arg-type]
            except StoreError:
                # The server closed the session (a restart, an idle timeout, a terminated backend):
                # again on another. A read-only session wrote nothing, so nothing is done twice.
                if attempt == attempts or not raw.broken:
                    raise
            finally:
                pool.putconn(raw)  # the pool discards a broken connection when it comes back
        raise AssertionError("unreachable")

    async def run(self, fn: Callable[[Conn], T]) -> T:
        pool, executor = self._pool, self._executor
        if pool is None or executor is None:
            pool, executor = self._open()
        return await asyncio.get_running_loop().run_in_executor(executor, self._call, pool, fn)

    def close(self) -> None:
        with self._opening:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
            if self._pool is not None:
                self._pool.close()
            self._pool = self._executor = None


class AdvisoryLock:
    """A session advisory lock on a connection kept for it (core.store.process_lock.ProcessLock on PostgreSQL); a
    connection lost while not held is replaced at the next use. The server releases the lock when the
    session ends, so a holder killed (or its session cut) never leaves it held."""

    def __init__(self, location: str, name: str) -> None:
        self.location = location
        self.name = name
        self._conn: PostgresConnection | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        if self._conn is None or self._conn.broken:
            if self._conn is not None:
                self._conn.close()
            self._conn = PostgresConnection(self.location)
        conn = self._conn
        conn.execute("SELECT pg_advisory_lock(hashtext(?))", (self.name,))
        try:
            yield
        finally:
            if not conn.broken:  # a lost session released it already
                conn.execute("SELECT pg_advisory_unlock(hashtext(?))", (self.name,))

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


POSTGRESQL = PostgresBackend()
PostgresConnection.backend = POSTGRESQL
