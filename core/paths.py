"""Where the checkout and the compiled contracts live on disk: a module of its own, so that reading a path
or an ABI does not load the chain client (core.chain imports web3: about half a second of start-up)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = ROOT / "contracts" / "build"


def load_artifact(name: str) -> dict[str, Any]:
    """The compiled artifact {abi, bytecode, ...} of contract `name` (run scripts.compile first)."""
    path = BUILD_DIR / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `python -m scripts.compile`")
    data: dict[str, Any] = json.loads(path.read_text())
    return data
