"""Fixed-window rate limits (table rate_windows): events per API key per UTC hour.

`hit` counts one event inside the caller's write transaction, so the check and the write it guards
commit (or roll back) together: with every write going through the one group committer, N requests
racing for the last slots of a window are counted one after another and exactly `limit` get in.
"""

from __future__ import annotations

from dataclasses import dataclass

import apsw

WINDOW_SECONDS = 3600


@dataclass(frozen=True)
class Hit:
    allowed: bool
    count: int  # events counted in the window, this one included when allowed
    window_start: int  # unix seconds of the top of the hour
    reset_at: int  # when the next window opens

    def retry_after(self, now: float) -> int:
        """Whole seconds until the window resets (at least 1)."""
        return max(1, int(-(-(self.reset_at - now) // 1)))


def window_start(now: float, window: int = WINDOW_SECONDS) -> int:
    return int(now // window) * window


def hit(conn: apsw.Connection, key_hash: str, now: float, limit: int, window: int = WINDOW_SECONDS) -> Hit:
    """Count one event for `key_hash` in the window containing `now` unless `limit` is reached."""
    start = window_start(now, window)
    # The insert-or-increment refuses (returns no row) once the count has reached the limit.
    row = conn.execute(
        "INSERT INTO rate_windows (key_hash, window_start, count) VALUES (?, ?, 1)"
        " ON CONFLICT (key_hash, window_start) DO UPDATE SET count = rate_windows.count + 1"
        " WHERE rate_windows.count < ?"
        " RETURNING count",
        (key_hash, start, limit),
    ).fetchone()
    if row is None:
        return Hit(False, limit, start, start + window)
    count = int(row[0])
    if count == 1:  # a key's first event of a window: drop its finished windows
        conn.execute("DELETE FROM rate_windows WHERE key_hash = ? AND window_start < ?", (key_hash, start))
    return Hit(True, count, start, start + window)


def count(conn: apsw.Connection, key_hash: str, now: float, window: int = WINDOW_SECONDS) -> int:
    """Events counted for `key_hash` in the window containing `now`."""
    row = conn.execute(
        "SELECT count FROM rate_windows WHERE key_hash = ? AND window_start = ?", (key_hash, window_start(now, window))
    ).fetchone()
    return int(row[0]) if row else 0
