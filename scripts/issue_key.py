"""Issue an API key as the operator, scoped to one account (every agent of it) or to one agent; or
revoke one.

    python -m scripts.issue_key --account ACCOUNT_ID [--scopes read,log] [--daily-cap 50] [--operator] [--db PATH]
    python -m scripts.issue_key --agent AGENT_UUID [--scopes read,log] [--daily-cap 50] [--operator] [--db PATH]
    python -m scripts.issue_key --operator [--db PATH]
    python -m scripts.issue_key --revoke KEY_ID [--db PATH]

--scopes limits what the key may do (read, log, spend, admin; default: all of them), --daily-cap
how much USDC it may move per UTC day (default: no cap), over HTTP and MCP alike.

--operator makes it an operator key: it opens the dashboard's service-wide operator view
(/dashboard/operator). That is not the scope 'admin' (which manages the key's own account; every key
has it unless --scopes leaves it out). Alone, --operator issues the key to a new account of its own
(no agents).

--revoke KEY_ID revokes a key (KEY_ID: the first 12 or more hex digits of its SHA-256, as the
operator view lists it): it authenticates nothing from then on and its dashboard sessions end.

The key (`aglk_` + 32 hex) is printed once on stdout and stored only as its SHA-256 hash; what
it is scoped to goes to stderr. --db defaults to the configured database (AGENTLEDGER_DB_PATH,
else <data dir>/agentledger.db). Exit status 2 for an unknown account, agent or key, nothing written.
"""

from __future__ import annotations

import argparse
import sys
import time
from decimal import Decimal
from pathlib import Path

from api.operation import parse_toolsets
from core import wallets
from core.dashboard import operator as operator_view
from core.errors import ServiceError
from core.keys import SCOPES, hash_api_key, new_api_key, parse_scopes, scopes_text
from core.money import AmountError, parse_usdc
from core.store import transaction
from scripts.operator_db import open_database


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.issue_key", description=__doc__.splitlines()[0])
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--account", metavar="ACCOUNT_ID", help="scope the key to every agent of this account")
    scope.add_argument("--agent", metavar="AGENT_UUID", help="scope the key to this one agent (its UUID)")
    scope.add_argument("--revoke", metavar="KEY_ID", help="revoke the key whose hash starts with KEY_ID")
    parser.add_argument(
        "--scopes", help=f"comma-separated subset of {','.join(SCOPES)} (default: all)", metavar="SCOPES"
    )
    parser.add_argument("--daily-cap", help="USDC the key may move per UTC day, e.g. 50 or 12.5", metavar="USDC")
    parser.add_argument(
        "--mcp-toolsets", help="MCP toolsets its sessions get by default, e.g. wallet,hire", metavar="TOOLSETS"
    )
    parser.add_argument(
        "--operator",
        action="store_true",
        help="an operator key: opens the dashboard's service-wide operator view (not the scope 'admin')",
    )
    parser.add_argument("--db", type=Path, help="SQLite file (default: the configured database)")
    args = parser.parse_args(argv)
    if args.revoke is not None:
        if args.scopes is not None or args.daily_cap is not None or args.operator:
            parser.error("--revoke takes no --scopes, --daily-cap or --operator")
        return _revoke(args.revoke, args.db)
    if args.account is None and args.agent is None and not args.operator:
        parser.error("one of --account, --agent, --operator or --revoke is required")
    try:
        scopes = None if args.scopes is None else scopes_text(parse_scopes(args.scopes))
        cap = None if args.daily_cap is None else parse_usdc(Decimal(args.daily_cap), allow_zero=True)
        toolsets = (
            None if args.mcp_toolsets is None else ",".join(sorted(parse_toolsets(args.mcp_toolsets, "--mcp-toolsets")))
        )
    except (ValueError, ArithmeticError, AmountError) as exc:
        parser.error(str(exc))
    except ServiceError as exc:
        parser.error(exc.message)
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
                operator=args.operator,
                mcp_toolsets=toolsets,
                new_account=args.account is None and args.agent is None,
            )
    except LookupError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    finally:
        conn.close()
    print(key)
    target = f"agent {agent_uuid} of account {account_id}" if agent_uuid else f"account {account_id}"
    kind = "an operator key" if args.operator else "a key"
    limits = f"scopes {scopes or 'all'}, daily cap {args.daily_cap + ' USDC' if cap is not None else 'none'}"
    print(f"issued {kind} for {target} ({limits}); it is shown only this once", file=sys.stderr)
    return 0


def _revoke(key_ref: str, db: Path | None) -> int:
    conn = open_database(db)
    if conn is None:
        return 2
    try:
        with transaction(conn):
            row = operator_view.revoke_key(conn, key_ref.strip().lower(), time.time(), None)
    except ServiceError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    finally:
        conn.close()
    print(f"revoked key {operator_view.key_id(row.key_hash)} of account {row.account_id}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
