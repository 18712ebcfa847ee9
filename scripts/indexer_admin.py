"""Operator commands for the indexer: see its state, and lift a halt.

    python -m scripts.indexer_admin status  [--db PATH]
    python -m scripts.indexer_admin resume  [--db PATH]
    python -m scripts.indexer_admin reindex [--db PATH] [--force]
    python -m scripts.indexer_admin reindex --from-events [--db PATH]

A fork below the block the indexer treated as final halts it (/healthz: indexer.state "halted" with
the reason; checkout complete and order complete answer 503 indexer_halted). The halt is stored in
the database, so these commands work on the running service's file, whichever process indexes;
the halted indexer notices within a second and carries on.

resume   lifts the halt and lets the indexer try again from its checkpoint: for a node that was
         wrong (a lagging or forked node behind a load balancer, the wrong RPC URL), once it is
         fixed. If the chain really did fork below finality, the indexer halts again.
reindex  drops everything the indexer derived from the chain (projections, events, checkpoint,
         block window, reorg journal, followers' cursors) and lifts the halt: the indexer rebuilds
         from the deploy block and the features' followers see every final event again (orders
         apply what they have not yet applied; orders still open are re-checked against the new
         chain). Refused unless the indexer is halted (--force: only with the indexer stopped).
reindex --from-events
         rebuilds every projection from the recorded events, without the node (indexer.rebuild): to
         repair projections or ship a new one. One transaction, so it may run beside a running
         indexer (which then goes on from its checkpoint); it keeps a halt as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from core.isotime import iso_utc
from core.store import Conn, orders, projections, transaction
from indexer.rebuild import rebuild_from_events
from scripts.operator_db import open_database


def _states(conn: Conn) -> list[dict[str, Any]]:
    return [
        {
            "chainId": r[0],
            "state": "halted" if r[5] is not None else "following",
            "seen": r[1],
            "final": r[2],
            "head": r[3],
            "updatedAt": iso_utc(float(r[4] or 0)),
            "reason": r[5],
            "haltedAt": None if r[6] is None else iso_utc(float(r[6])),
        }
        for r in projections.sync_states(conn)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.indexer_admin", description=__doc__.split("\n")[0])
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", type=Path, help="SQLite file (default: the configured database)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("status", parents=[common], help="the indexer's checkpoint and halt, as JSON")
    sub.add_parser("resume", parents=[common], help="lift the halt: try again from the checkpoint")
    reindex = sub.add_parser(
        "reindex", parents=[common], help="drop the chain-derived data and rebuild it from the deploy block"
    )
    reindex.add_argument("--force", action="store_true", help="even when not halted (only with the indexer stopped)")
    reindex.add_argument(
        "--from-events", action="store_true", help="rebuild the projections from the recorded events, without the node"
    )
    args = parser.parse_args(argv)

    conn = open_database(args.db)
    if conn is None:
        return 1
    try:
        states = _states(conn)
        if args.command == "status":
            print(json.dumps(states[0] if len(states) == 1 else states, indent=2))
            return 0
        halted = [s for s in states if s["state"] == "halted"]
        if args.command == "reindex" and args.from_events:
            for s in states:
                started = time.perf_counter()
                n = rebuild_from_events(conn, s["chainId"])
                print(
                    f"rebuilt the projections of chain {s['chainId']} from {n} recorded events"
                    f" in {time.perf_counter() - started:.2f} s; the indexer goes on from block {s['seen']}"
                )
            return 0
        if args.command == "resume":
            if not halted:
                print("the indexer is not halted: nothing to resume", file=sys.stderr)
                return 2
            with transaction(conn):
                for s in halted:
                    projections.clear_halt(conn, s["chainId"])
            print(f"resumed: the indexer follows chain {halted[0]['chainId']} from block {halted[0]['seen']} again")
            return 0
        if not halted and not args.force:
            print(
                "the indexer is not halted: a running indexer must not have its index dropped under it"
                " (stop it and pass --force to rebuild anyway)",
                file=sys.stderr,
            )
            return 2
        with transaction(conn):
            projections.reset_chain_data(conn)
            rechecked = orders.unsettle_open_orders(conn)
        print(
            "re-indexing: the chain-derived data is dropped; the indexer rebuilds it from the deploy block"
            f" ({rechecked} open orders are re-checked against the chain as it goes)"
        )
        return 0
    finally:
        conn.close()


if __name__ == "__main__":
    raise SystemExit(main())
