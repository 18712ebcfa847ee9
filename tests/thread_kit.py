"""Running a test's writers in threads, as separate processes would run them."""

from __future__ import annotations

import threading
from collections.abc import Callable

from core.store import Conn, Database, commit, transaction


def run_threads(n: int, target: Callable[[int], None]) -> None:
    """Run target(0) .. target(n - 1) in n threads at once, wait for all, and fail with every error any
    of them raised (an error in a thread would otherwise only be a warning)."""
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            target(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def waits_for_commit(conn: Conn, database: Database, work: Callable[[Conn], object], *, timeout: float = 30.0) -> None:
    """`conn` holds a transaction open; `work` runs in a transaction of its own connection in a thread
    (the other process). It must wait for `conn`'s transaction (a row lock on PostgreSQL, SQLite's write
    lock), which is then committed; `work` must then finish without an error."""
    failed: list[BaseException] = []

    def run() -> None:
        other = database.connect(durable=False)
        try:
            with transaction(other):
                work(other)
        except BaseException as exc:
            failed.append(exc)
        finally:
            other.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(0.3)
    assert thread.is_alive()  # waiting for the open transaction
    commit(conn)
    thread.join(timeout)
    assert not thread.is_alive() and failed == []
