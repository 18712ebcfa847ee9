"""deployments/<chainId>.json: every deployed address and the deploy block (indexer start)."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from core.paths import ROOT

DEFAULT_DIR = ROOT / "deployments"


@dataclass(frozen=True)
class Deployment:
    chain_id: int
    network: str
    deploy_block: int
    deployer: str
    usdc: str
    mock_usdc: bool
    contracts: dict[str, str]
    roles: dict[str, str] = field(default_factory=dict)
    solc_version: str = ""

    def address(self, name: str) -> str:
        return self.contracts[name]


def path_for(chain_id: int, directory: Path = DEFAULT_DIR) -> Path:
    return directory / f"{chain_id}.json"


def save(dep: Deployment, directory: Path = DEFAULT_DIR) -> Path:
    """Write atomically (temp file + rename) so a reader never sees half a file."""
    directory.mkdir(parents=True, exist_ok=True)
    target = path_for(dep.chain_id, directory)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".deploy-", suffix=".json")
    with os.fdopen(fd, "w") as fh:
        json.dump(asdict(dep), fh, indent=2, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, target)
    return target


def load(chain_id: int, directory: Path = DEFAULT_DIR) -> Deployment:
    data = json.loads(path_for(chain_id, directory).read_text())
    return Deployment(**data)
