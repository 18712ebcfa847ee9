"""Operator command for the outbox (every channel: webhooks, e-mail): dead letters and backlogs.

    python -m scripts.webhooks list-dead [--json] [--db PATH]
    python -m scripts.webhooks reset (EVENT_ID | --all) [--db PATH]
    python -m scripts.webhooks hosts [--json] [--db PATH]

list-dead prints one dead letter a line (event id, event, source, attempts, last HTTP status,
last error, URL; never the secret), or a JSON array with --json. reset puts the delivery (or
every dead letter) back to pending with its attempt count at 0 and due now: a running service's
dispatcher picks it up at its next poll (within a fraction of a second), with the same event id and
the full retry schedule. --db defaults to the configured database (AGENTLEDGER_DB_PATH, else
<data dir>/agentledger.db). Exit status 2 when the database is missing or the event id is not a
dead letter.

hosts prints one target host ("name:port") a line with pending deliveries: how many, how many the
dispatcher's circuit breaker holds back now (the host failed repeatedly; they wait for its
cool-down to end, their attempts unchanged), the age of the oldest pending one and when the next
attempt is due; the host with the oldest pending delivery first. The breaker itself lives in the
running service's memory; this view reads only the database.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from core.store import Conn, transaction
from core.store import outbox as store
from scripts.operator_db import open_database


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.webhooks", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    list_dead = commands.add_parser("list-dead", help="list dead letters")
    list_dead.add_argument("--json", action="store_true", help="print a JSON array")
    reset = commands.add_parser("reset", help="retry a dead letter (or all of them) from the start")
    which = reset.add_mutually_exclusive_group(required=True)
    which.add_argument("event_id", nargs="?", metavar="EVENT_ID", help="the delivery's event id (evt_...)")
    which.add_argument("--all", action="store_true", help="every dead letter")
    hosts = commands.add_parser("hosts", help="target hosts with pending deliveries, held ones, oldest age")
    hosts.add_argument("--json", action="store_true", help="print a JSON array")
    for sub in (list_dead, reset, hosts):
        sub.add_argument("--db", type=Path, help="SQLite file (default: the configured database)")
    args = parser.parse_args(argv)
    conn = open_database(args.db)
    if conn is None:
        return 2
    try:
        if args.command == "list-dead":
            return _list_dead(conn, as_json=args.json)
        if args.command == "hosts":
            return _hosts(conn, time.time(), as_json=args.json)
        with transaction(conn):
            count = store.reset_dead_letter(conn, None if args.all else args.event_id, time.time())
    finally:
        conn.close()
    if count == 0 and not args.all:
        print(f"error: {args.event_id} is not a dead letter", file=sys.stderr)
        return 2
    print(f"reset {count} dead letter(s) to pending", file=sys.stderr)
    return 0


def _list_dead(conn: Conn, *, as_json: bool) -> int:
    rows = store.dead_letters(conn)
    if as_json:
        print(json.dumps([dataclasses.asdict(r) for r in rows], indent=2))
    else:
        for r in rows:
            error = (r.last_error or "").replace("\t", " ").replace("\n", " ")
            print(f"{r.event_id}\t{r.event}\t{r.source}\t{r.attempts}\t{r.last_status or '-'}\t{error}\t{r.url}")
    print(f"{len(rows)} dead letter(s)", file=sys.stderr)
    return 0


def _hosts(conn: Conn, now: float, *, as_json: bool) -> int:
    rows = store.hosts(conn, now)
    if as_json:
        print(
            json.dumps(
                [
                    {
                        "host": r.host,
                        "pending": r.pending,
                        "held": r.held,
                        "oldest_age_seconds": round(now - r.oldest_created_at, 3),
                        "next_attempt_in_seconds": round(max(0.0, r.next_attempt_at - now), 3),
                    }
                    for r in rows
                ],
                indent=2,
            )
        )
    else:
        print("host\tpending\theld\toldest\tnext attempt")
        for r in rows:
            print(
                f"{r.host}\t{r.pending}\t{r.held}\t{_age(now - r.oldest_created_at)}"
                f"\t{'due' if r.next_attempt_at <= now else 'in ' + _age(r.next_attempt_at - now)}"
            )
    print(f"{len(rows)} host(s) with pending deliveries", file=sys.stderr)
    return 0


def _age(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


if __name__ == "__main__":
    raise SystemExit(main())
