"""SQL of the background jobs' run records (table job_runs; the rules are core.jobs')."""

from __future__ import annotations

from dataclasses import astuple, dataclass

import apsw


@dataclass(frozen=True)
class JobRunRow:
    name: str
    runs: int
    failures: int
    last_started: float | None
    last_finished: float | None
    last_error: str | None


def job_runs(conn: apsw.Connection) -> list[JobRunRow]:
    rows = conn.execute(
        "SELECT name, runs, failures, last_started, last_finished, last_error FROM job_runs ORDER BY name"
    ).fetchall()
    return [JobRunRow(str(r[0]), int(r[1]), int(r[2]), r[3], r[4], r[5]) for r in rows]  # type: ignore[arg-type]


def save_job_run(conn: apsw.Connection, row: JobRunRow) -> None:
    conn.execute(
        "INSERT INTO job_runs (name, runs, failures, last_started, last_finished, last_error)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET runs = excluded.runs,"
        " failures = excluded.failures, last_started = excluded.last_started,"
        " last_finished = excluded.last_finished, last_error = excluded.last_error",
        astuple(row),
    )
