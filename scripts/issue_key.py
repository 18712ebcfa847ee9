"""Issue an API key as the operator, scoped to one account (every agent of it) or to one agent.

    python -m scripts.issue_key --account ACCOUNT_ID [--db PATH]
    python -m scripts.issue_key --agent AGENT_UUID [--scopes read,log] [--daily-cap 50] [--db PATH]

--scopes limits what the key may do (read, log, spend, admin; default: all of them), --daily-cap
how much USDC it may move per UTC day (default: no cap), over HTTP and MCP alike.

The key (`aglk_` + 32 hex) is printed once on stdout and stored only as its SHA-256 hash; what
it is scoped to goes to stderr. --db defaults to the configured database (AGENTLEDGER_DB_PATH,
else <data dir>/agentledger.db). Exit status 2 for an unknown account or agent, nothing written.
"""

from __future__ import annotations

import argparse
import sys
import time
from decimal import Decimal
from pathlib import Path

from core import wallets
from core.keys import SCOPES, hash_api_key, new_api_key, parse_scopes, scopes_text
from core.money import AmountError, parse_usdc
from core.store import transaction
from scripts.operator_db import open_database


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.issue_key", description=__doc__.splitlines()[0])
    scope = parser.add_mutually_exclusive_group(required=True)
    scope.add_argument("--account", metavar="ACCOUNT_ID", help="scope the key to every agent of this account")
    scope.add_argument("--agent", metavar="AGENT_UUID", help="scope the key to this one agent (its UUID)")
    parser.add_argument(
        "--scopes", help=f"comma-separated subset of {','.join(SCOPES)} (default: all)", metavar="SCOPES"
    )
    parser.add_argument("--daily-cap", help="USDC the key may move per UTC day, e.g. 50 or 12.5", metavar="USDC")
    parser.add_argument("--db", type=Path, help="SQLite file (default: the configured database)")
    args = parser.parse_args(argv)
    try:
        scopes = None if args.scopes is None else scopes_text(parse_scopes(args.scopes))
        cap = None if args.daily_cap is None else parse_usdc(Decimal(args.daily_cap), allow_zero=True)
    except (ValueError, ArithmeticError, AmountError) as exc:
        parser.error(str(exc))
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
                scopes=scopes,
                daily_cap=cap,
            )
    except LookupError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    finally:
        conn.close()
    print(key)
    target = f"agent {agent_uuid} of account {account_id}" if agent_uuid else f"account {account_id}"
    limits = f"scopes {scopes or 'all'}, daily cap {args.daily_cap + ' USDC' if cap is not None else 'none'}"
    print(f"issued a key for {target} ({limits}); it is shown only this once", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
