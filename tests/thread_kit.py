"""Running a test's writers in threads, as separate processes would run them."""

from __future__ import annotations

import threading
from collections.abc import Callable


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
