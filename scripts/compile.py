"""Compile contracts/*.sol with the npm solc package (solcjs, offline) via its standard-JSON API.

Writes one artifact per contract to contracts/build/<Name>.json ({abi, bytecode,
deployedBytecode}) and a Hardhat-style build-info file (input and output with ASTs and source
maps: what crytic-compile's hardhat parser reads, so slither can analyse it offline). Skips the
compiler when the sources have not changed. contracts/test/*.sol (test-only helpers such as an
ERC-1271 wallet) are compiled too; scripts.deploy never deploys them.

    python -m scripts.compile [--force]
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONTRACTS_DIR = ROOT / "contracts"
BUILD_DIR = CONTRACTS_DIR / "build"
TEST_CONTRACTS_DIR = CONTRACTS_DIR / "test"
DRIVER = ROOT / "scripts" / "solc_compile.js"
SOLC_PACKAGE = ROOT / "node_modules" / "solc" / "package.json"
EVM_VERSION = "cancun"  # supported by Base and by anvil; no newer opcodes needed


def standard_json_input() -> dict[str, Any]:
    paths = [*sorted(CONTRACTS_DIR.glob("*.sol")), *sorted(TEST_CONTRACTS_DIR.glob("*.sol"))]
    sources = {p.relative_to(ROOT).as_posix(): {"content": p.read_text()} for p in paths}
    return {
        "language": "Solidity",
        "sources": sources,
        "settings": {
            "optimizer": {"enabled": True, "runs": 200},
            "evmVersion": EVM_VERSION,
            "outputSelection": {
                "*": {
                    "*": [
                        "abi",
                        "evm.bytecode.object",
                        "evm.bytecode.sourceMap",
                        "evm.deployedBytecode.object",
                        "evm.deployedBytecode.sourceMap",
                        "evm.methodIdentifiers",
                        "userdoc",
                        "devdoc",
                    ],
                    "": ["ast"],
                }
            },
        },
    }


def _fingerprint(std_input: dict[str, Any]) -> str:
    blob = json.dumps(std_input, sort_keys=True).encode() + SOLC_PACKAGE.read_bytes()
    return hashlib.sha256(blob).hexdigest()


def compile_contracts(force: bool = False) -> Path:
    """Compile if needed; return the build directory. Safe to call from parallel processes."""
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    with open(BUILD_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _compile_locked(force)


def _compile_locked(force: bool) -> Path:
    std_input = standard_json_input()
    fingerprint = _fingerprint(std_input)
    stamp = BUILD_DIR / ".fingerprint"
    if not force and stamp.exists() and stamp.read_text() == fingerprint:
        return BUILD_DIR

    input_path = BUILD_DIR / "standard-input.json"
    output_path = BUILD_DIR / "standard-output.json"
    input_path.write_text(json.dumps(std_input))
    proc = subprocess.run(
        ["node", str(DRIVER), str(input_path), str(output_path)], capture_output=True, text=True, cwd=ROOT
    )
    if proc.returncode != 0:
        raise RuntimeError(f"solc driver failed: {proc.stderr.strip()}")
    output = json.loads(output_path.read_text())
    errors = [e for e in output.get("errors", []) if e.get("severity") == "error"]
    for e in output.get("errors", []):
        print(e.get("formattedMessage", e.get("message")), file=sys.stderr)
    if errors:
        raise RuntimeError(f"solc reported {len(errors)} error(s)")

    for source, contracts in output["contracts"].items():
        if not source.startswith("contracts/"):
            continue
        for name, c in contracts.items():
            artifact = {
                "contractName": name,
                "sourceName": source,
                "abi": c["abi"],
                "bytecode": "0x" + c["evm"]["bytecode"]["object"],
                "deployedBytecode": "0x" + c["evm"]["deployedBytecode"]["object"],
                "methodIdentifiers": c["evm"]["methodIdentifiers"],
            }
            _write_atomic(BUILD_DIR / f"{name}.json", json.dumps(artifact, indent=1))

    solc_version = json.loads(SOLC_PACKAGE.read_text())["version"]
    build_info = {
        "_format": "hh-sol-build-info-1",
        "solcVersion": solc_version,
        "solcLongVersion": proc.stdout.strip().removeprefix("solc "),
        "input": std_input,
        "output": output,
    }
    info_dir = BUILD_DIR / "build-info"
    info_dir.mkdir(exist_ok=True)
    _write_atomic(info_dir / "agentledger.json", json.dumps(build_info))
    _write_atomic(stamp, fingerprint)
    return BUILD_DIR


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="recompile even if sources are unchanged")
    args = parser.parse_args(argv)
    out = compile_contracts(force=args.force)
    print(f"artifacts in {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
