"""SQL of the daily spend caps (table spend_holds): what each value-moving call of a capped key has
reserved of its UTC day. The rules (what counts, when a hold is released) are core.spend_caps'."""

from __future__ import annotations

from typing import Any, cast

import apsw

from core.store import sums


def _rows(conn: apsw.Connection, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    return cast(list[tuple[Any, ...]], conn.execute(sql, params).fetchall())


def used(conn: apsw.Connection, key_hash: str, day: str) -> int:
    rows = sums.rows(
        conn, "SELECT coalesce(exact_sum(amount), 0) FROM spend_holds WHERE key_hash = ? AND day = ?", (key_hash, day)
    )
    return int(rows[0][0])


def exists(conn: apsw.Connection, key_hash: str, ref: str) -> bool:
    return bool(conn.execute("SELECT 1 FROM spend_holds WHERE key_hash = ? AND ref = ?", (key_hash, ref)).fetchall())


def insert(conn: apsw.Connection, key_hash: str, ref: str, day: str, amount: int) -> None:
    conn.execute(
        "INSERT INTO spend_holds (key_hash, ref, day, amount) VALUES (?, ?, ?, ?)", (key_hash, ref, day, amount)
    )


def delete(conn: apsw.Connection, key_hash: str, ref: str) -> None:
    conn.execute("DELETE FROM spend_holds WHERE key_hash = ? AND ref = ?", (key_hash, ref))


def purge(conn: apsw.Connection, key_hash: str, before_day: str) -> None:
    conn.execute("DELETE FROM spend_holds WHERE key_hash = ? AND day < ?", (key_hash, before_day))
