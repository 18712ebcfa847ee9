"""Issue an API key as the operator, scoped to one account (every agent of it) or to one agent.

    python -m scripts.issue_key --account ACCOUNT_ID [--admin] [--db PATH]
    python -m scripts.issue_key --agent AGENT_UUID [--admin] [--db PATH]
    python -m scripts.issue_key --admin [--db PATH]

--admin makes the key an operator's key: it signs in to the dashboard's operator view (/dashboard/
operator). Alone, it is issued to a new account of its own (no agents).

The key (`aglk_` + 32 hex) is printed once on stdout and stored only as its SHA-256 hash; what
it is scoped to goes to stderr. --db defaults to the configured database (AGENTLEDGER_DB_PATH,
else <data dir>/agentledger.db). Exit status 2 for an unknown account or agent, nothing written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from core import wallets
from core.keys import hash_api_key, new_api_key
from core.store import transaction
from scripts.operator_db import open_database


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.issue_key", description=__doc__.splitlines()[0])
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--account", metavar="ACCOUNT_ID", help="scope the key to every agent of this account")
    scope.add_argument("--agent", metavar="AGENT_UUID", help="scope the key to this one agent (its UUID)")
    parser.add_argument("--admin", action="store_true", help="an operator's key: opens the dashboard's operator view")
    parser.add_argument("--db", type=Path, help="SQLite file (default: the configured database)")
    args = parser.parse_args(argv)
    if args.account is None and args.agent is None and not args.admin:
        parser.error("one of --account, --agent or --admin is required")
    conn = open_database(args.db)
    if conn is None:
        return 2
    key = new_api_key()
    try:
        with transaction(conn):
            account_id, agent_uuid = wallets.issue_key(
                conn,
                hash_api_key(key),
                time.time(),
                account_id=args.account,
                agent_uuid=args.agent,
                admin=args.admin,
                new_account=args.account is None and args.agent is None,
            )
    except LookupError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    finally:
        conn.close()
    print(key)
    target = f"agent {agent_uuid} of account {account_id}" if agent_uuid else f"account {account_id}"
    kind = "an admin key" if args.admin else "a key"
    print(f"issued {kind} for {target}; it is shown only this once", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
