"""Operator commands for orders: show one, fail one, recover a failed one.

    python -m scripts.orders show ORDER_ID
    python -m scripts.orders fail ORDER_ID --reason TEXT
    python -m scripts.orders recover ORDER_ID [--reason TEXT]

They run on the service's host against its SQLite file (AGENTLEDGER_DB_PATH or the default), as the
actor "operator": the same checked transitions, history, audit entry and webhook as any other move.
The webhook goes out when the running service's dispatcher next polls its outbox.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from core.checkout import orders, views
from core.checkout.orders import InvalidTransition
from core.config import Settings
from core.store import open_database, transaction
from core.store import orders as store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.orders", description=__doc__.split("\n")[0])
    parser.add_argument("--db", help="SQLite file (default: the configured database)")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print an order as its funder sees it")
    show.add_argument("order_id")
    fail = sub.add_parser("fail", help="mark an order failed")
    fail.add_argument("order_id")
    fail.add_argument("--reason", required=True)
    recover = sub.add_parser("recover", help="move a failed order back to in_progress")
    recover.add_argument("order_id")
    recover.add_argument("--reason", default="recovered by the operator")
    args = parser.parse_args(argv)

    conn = open_database(args.db or Settings.load().database).connect()
    try:
        if args.command == "show":
            view = views.order_view(conn, args.order_id, "funder")
            if view is None:
                print(f"no order {args.order_id}", file=sys.stderr)
                return 1
            print(json.dumps(view, indent=2))
            return 0
        to_state = "failed" if args.command == "fail" else "in_progress"
        order = store.get_order(conn, args.order_id)
        if order is not None and args.command == "recover":
            escrow = store.escrow_status(conn, order.job_id)
            if escrow not in (None, "funded"):
                print(f"{order.id}: the escrow is {escrow} on-chain: nothing to recover", file=sys.stderr)
                return 2
        try:
            with transaction(conn):
                order = orders.transition(
                    conn, args.order_id, to_state, actor="operator", now=time.time(), reason=args.reason
                )
        except LookupError:
            print(f"no order {args.order_id}", file=sys.stderr)
            return 1
        except InvalidTransition as exc:
            print(str(exc), file=sys.stderr)
            return 2
        print(f"{order.id}: {order.status}")
        return 0
    finally:
        conn.close()


if __name__ == "__main__":
    raise SystemExit(main())
