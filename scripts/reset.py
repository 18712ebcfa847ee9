"""`make reset`: the next `make run` starts from nothing. Removes the local chain (anvil's state files,
deployments/31337.json) and the SQLite database with its journal files. Refuses while `make run`
holds the data directory's anvil, and leaves a PostgreSQL database alone (dropping a server's database
is its administrator's call, not a make target's): it says so and exits 2."""

from __future__ import annotations

import sys
from pathlib import Path

from core import deployments
from core.anvil import port_in_use
from core.config import Settings
from core.networks import LOCAL_CHAIN_ID
from scripts.run import STATE_PREFIX


def local_files(settings: Settings) -> list[Path]:
    """What `make reset` removes (those that exist)."""
    db = Path(settings.db_path) if settings.db_path else settings.data_dir / "agentledger.db"
    candidates = [
        *settings.data_dir.glob(f"{STATE_PREFIX}*.json"),
        deployments.path_for(LOCAL_CHAIN_ID, settings.deployments_dir),
        db,
        db.with_name(db.name + "-wal"),
        db.with_name(db.name + "-shm"),
    ]
    return [p for p in candidates if p.exists()]


def main() -> int:
    settings = Settings.load()
    if settings.rpc_url or settings.database_url:
        print(
            "error: make reset clears the local chain and SQLite file only; with AGENTLEDGER_RPC_URL or"
            " AGENTLEDGER_DATABASE_URL set, reset that node or database yourself",
            file=sys.stderr,
        )
        return 2
    if (settings.data_dir / "anvil.pid").exists() and port_in_use(settings.anvil_port):
        print("error: make run is running (its anvil answers): stop it first", file=sys.stderr)
        return 2
    removed = local_files(settings)
    for path in removed:
        path.unlink()
    print(f"removed {len(removed)} files: " + (", ".join(str(p) for p in removed) or "nothing to remove"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
