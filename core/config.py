"""Configuration: environment variables prefixed AGENTLEDGER_, optionally a TOML file.

Precedence: environment > TOML file (AGENTLEDGER_CONFIG=path, keys without the prefix, lower
case) > defaults. Every default works on a developer machine; production values (RPC URL,
Base chain, bind address) are only ever configuration.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from core.paths import ROOT
from core.store import Database, open_database

PREFIX = "AGENTLEDGER_"


@dataclass(frozen=True)
class Settings:
    #: JSON-RPC endpoint; empty means "start a local anvil" (make run only).
    rpc_url: str = ""
    #: Port of the local anvil `make run` starts when rpc_url is empty.
    anvil_port: int = 8545
    #: Where deployments/<chainId>.json live.
    deployments_dir: Path = ROOT / "deployments"
    #: Runtime data (SQLite files, logs).
    data_dir: Path = ROOT / "var"
    api_host: str = "127.0.0.1"
    api_port: int = 8080
    #: SQLite file shared by the indexer and the API; empty: <data_dir>/agentledger.db.
    db_path: str = ""
    #: The database as a URL: postgresql://user:password@host:port/name for PostgreSQL; empty: the SQLite
    #: file of db_path.
    database_url: str = ""
    #: PostgreSQL: connections (and worker threads) each API process reads through (core.store.reads);
    #: 0: reads on the event loop, on one connection (a server on the same host: see the README).
    read_pool_size: int = 8
    #: Seconds a long-lived part of a process (writer, indexer, outbox dispatcher, job leases) may keep
    #: failing while the database answers before the process exits (status 70) for its supervisor to
    #: restart it; while the database is out of reach the process waits for it instead (core.liveness).
    unhealthy_exit_seconds: float = 60.0
    #: Blocks behind the head an event becomes final when the node has no `finalized` tag
    #: (-1: the network's default: 0 locally, 12 on Base).
    confirmations: int = -1
    #: Seconds between head polls when the indexer is caught up.
    poll_interval: float = 0.1
    #: Run the indexer inside the API process (false: run `python -m indexer` separately).
    run_indexer: bool = True
    #: Private key (0x hex) of the service's operator account: funds and releases gateway jobs,
    #: mints provider NFTs, anchors the audit log. Empty: anvil's development key, on a local chain only.
    operator_key: str = ""
    #: Base URL the service is reached at (verification links, agent card); empty: the request's own.
    public_url: str = ""
    #: Webhook targets on private, loopback or link-local addresses: "auto" allows them on a local
    #: chain only (make run, tests), "true" always, "false" never (production).
    webhook_allow_private: str = "auto"
    #: Kubo RPC API (e.g. http://127.0.0.1:5001) to pin deliverables to; empty: store locally only.
    ipfs_api_url: str = ""
    #: When the anchorer runs each day, UTC "HH:MM".
    anchor_time_utc: str = "00:00"
    #: Seconds between anchors instead (only when the log grew); 0: daily at anchor_time_utc. `make run`
    #: on its own local chain takes 60 when this is 0, so /verify finds entries anchored within a minute.
    anchor_interval: float = 0.0
    #: Seconds an unpaid checkout session stays open before it expires.
    checkout_session_ttl: float = 3600.0
    #: Log lines as plain text ("text") or one JSON object per line ("json", with one access line per
    #: request: method, route, status, latency, request id).
    log_format: str = "text"
    #: A bearer token /metrics requires (Authorization: Bearer <token>); empty: /metrics is open.
    metrics_token: str = ""
    #: SMTP relay of the outbox's e-mail channel: smtp://user:password@host:587 (STARTTLS required) or
    #: smtps://...:465; empty: each e-mail is written as an .eml file under <data_dir>/mail/.
    smtp_url: str = ""
    #: The From of every e-mail (and the envelope sender).
    smtp_from: str = "agentledger <noreply@agentledger.invalid>"
    #: A CA bundle (PEM) to check the relay's certificate against; empty: the system's.
    smtp_ca_file: str = ""
    #: The marketplace's sweeps: settle committed sales (seconds between runs), expire listings,
    #: reconcile recorded receipts with the chain.
    drop_settle_interval: float = 300.0
    drop_expire_interval: float = 3600.0
    drop_reconcile_interval: float = 30.0

    @property
    def database(self) -> Database:
        if self.database_url:
            return open_database(self.database_url)
        return open_database(Path(self.db_path) if self.db_path else self.data_dir / "agentledger.db")

    @classmethod
    def load(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ) if env is None else env
        values: dict[str, Any] = {}
        config_file = env.get(PREFIX + "CONFIG")
        if config_file:
            values.update(tomllib.loads(Path(config_file).read_text()))
        for f in fields(cls):
            raw = env.get(PREFIX + f.name.upper())
            if raw is not None:
                values[f.name] = raw
        known = {f.name: f for f in fields(cls)}
        unknown = set(values) - set(known)
        if unknown:
            raise ValueError(f"unknown configuration keys: {sorted(unknown)}")
        coerced: dict[str, Any] = {}
        for name, value in values.items():
            default = getattr(cls, name)
            if isinstance(default, bool):
                coerced[name] = str(value).lower() in ("1", "true", "yes", "on")
            elif isinstance(default, float):
                coerced[name] = float(value)
            elif isinstance(default, int):
                coerced[name] = int(value)
            elif isinstance(default, Path):
                coerced[name] = Path(value)
            else:
                coerced[name] = str(value)
        settings = cls(**coerced)
        if settings.read_pool_size < 0:
            raise ValueError("read_pool_size must be 0 or more")
        if settings.unhealthy_exit_seconds <= 0:
            raise ValueError("unhealthy_exit_seconds must be more than 0")
        return settings
