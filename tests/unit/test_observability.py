"""Logs (JSON lines, secrets redacted), backfill progress (a bar on a terminal, lines elsewhere) and
the group committer's report of each commit."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
from pathlib import Path

import pytest

from core import logs
from core.keys import new_api_key
from core.store.committer import GroupCommitter
from indexer.progress import ProgressReporter, Snapshot

# ---- logs ----------------------------------------------------------------------------------------------


def test_redact_removes_keys_session_tokens_and_bearer_tokens() -> None:
    key = new_api_key()
    session = "agls_" + "Ab9_-" * 8 + "xyz"
    text = f"key={key} cookie=agl_session={session}; Authorization: Bearer s3cr3t.token, ok"
    out = logs.redact(text)
    assert key not in out and session not in out and "s3cr3t.token" not in out
    assert out == ("key=aglk_[redacted] cookie=agl_session=agls_[redacted]; Authorization: Bearer [redacted], ok")
    assert logs.redact("tx 0x" + "ab" * 32) == "tx 0x" + "ab" * 32  # hashes are not secrets


def test_json_lines_carry_extra_fields_and_are_redacted_even_in_tracebacks() -> None:
    stream = io.StringIO()
    handler = logs.configure("json", stream=stream, level=logging.DEBUG)
    key = new_api_key()
    try:
        log = logging.getLogger("agentledger.test")
        log.info("hello %s", key, extra={"route": "/x/{id}", "status": 201, "latency_ms": 1.5, "request_id": "r1"})
        try:
            raise ValueError(f"bad key {key}")
        except ValueError:
            log.exception("failed")
    finally:
        logging.getLogger().removeHandler(handler)
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["message"] == "hello aglk_[redacted]" and first["level"] == "info"
    assert (first["route"], first["status"], first["latency_ms"], first["request_id"]) == ("/x/{id}", 201, 1.5, "r1")
    assert first["logger"] == "agentledger.test" and re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", first["ts"])
    assert "ValueError: bad key aglk_[redacted]" in second["exc"] and key not in stream.getvalue()


def test_text_logs_are_redacted_too_and_an_unknown_format_is_refused() -> None:
    stream = io.StringIO()
    handler = logs.configure("text", stream=stream)
    key = new_api_key()
    try:
        logging.getLogger("agentledger.test").warning("key %s", key)
    finally:
        logging.getLogger().removeHandler(handler)
    assert "agentledger.test key aglk_[redacted]" in stream.getvalue() and key not in stream.getvalue()
    with pytest.raises(ValueError, match="AGENTLEDGER_LOG_FORMAT"):
        logs.configure("xml")


# ---- progress -------------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def snap(current: int, target: int = 100, elapsed: float = 2.0) -> Snapshot:
    return Snapshot(start_block=0, current=current, target=target, events=current * 50, elapsed=elapsed)


def test_snapshot_figures() -> None:
    s = snap(25)
    assert (s.fraction, s.blocks_per_s, s.events_per_s, s.eta) == (0.25, 12.5, 625.0, 6.0)
    assert s.line() == "block 25/100 (25%) 12 blocks/s 625 events/s ETA 6s"
    assert snap(0).eta == float("inf") and snap(100).done and Snapshot(5, 5, 5, 0, 0).fraction == 1.0
    bar = s.bar(100)
    assert bar.startswith("backfill [") and "25% block 25/100" in bar and "ETA 6s" in bar and len(bar) < 100
    assert "#" * 5 in bar and "-" * 10 in bar
    assert len(snap(50).bar(40)) <= 39  # never wider than the terminal


def test_on_a_terminal_the_bar_is_redrawn_in_place_and_ends_with_a_newline() -> None:
    out, clock = Terminal(), Clock()
    r = ProgressReporter(out, clock=clock)
    assert r.tty
    r(snap(10))
    clock.now = 0.05
    r(snap(20))  # within 0.1 s: not redrawn
    clock.now = 0.2
    r(snap(50))
    r(snap(100))  # the last one always shows
    text = out.getvalue()
    assert text.count("\r") == 3 and text.endswith("\n") and text.count("\n") == 1
    assert "block 10/100" in text and "block 20/100" not in text and "block 100/100" in text
    assert "\x1b[K" in text  # the rest of the old line cleared


def test_elsewhere_plain_lines_at_most_one_a_second() -> None:
    lines: list[str] = []
    clock = Clock()
    r = ProgressReporter(io.StringIO(), plain=lines.append, clock=clock)
    assert not r.tty
    for t, block in ((0.0, 10), (0.5, 20), (1.2, 30), (1.3, 40), (1.4, 100)):
        clock.now = t
        r(snap(block))
    assert [ln.split()[1] for ln in lines] == ["10/100", "30/100", "100/100"]
    assert not any("\r" in ln for ln in lines)


def test_after_the_first_backfill_a_one_range_catch_up_shows_nothing() -> None:
    lines: list[str] = []
    r = ProgressReporter(io.StringIO(), plain=lines.append, clock=Clock())
    r(snap(100))  # the first backfill, done in one range: shown
    r(Snapshot(100, 101, 101, 1, 0.01))  # the next block of a local chain: not
    r(Snapshot(101, 150, 400, 9, 1.0))  # a long catch-up: shown from its start
    r(Snapshot(101, 400, 400, 99, 2.0))
    assert [ln.split()[1] for ln in lines] == ["100/100", "150/400", "400/400"]


# ---- the group committer's report ---------------------------------------------------------------------


def test_the_committer_reports_each_groups_size_wait_and_commit_time(tmp_path: Path) -> None:
    seen: list[tuple[int, float, float]] = []

    async def main() -> None:
        from core.store import connect

        connect(tmp_path / "c.db").close()  # the schema
        w = GroupCommitter(tmp_path / "c.db")
        w.observer = lambda size, wait, commit: seen.append((size, wait, commit))
        await asyncio.gather(
            *(w.run(lambda c: c.execute("INSERT INTO accounts VALUES (hex(randomblob(8)), 0)")) for _ in range(20))
        )
        await w.run(lambda c: None)
        await w.close()
        assert w.groups == len(seen)

    asyncio.run(main())
    assert sum(size for size, _, _ in seen) == 21 and len(seen) >= 2
    assert all(wait >= commit >= 0 for _, wait, commit in seen)
