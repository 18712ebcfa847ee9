"""The TypeScript SDK (sdk/typescript) built for the tests that run it: its dist/ compiled once, under a
lock, and only when its sources changed, so pytest-xdist workers never rebuild it under each other."""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sdk" / "typescript"
NODE = PACKAGE / "node_modules" / "node" / "bin" / "node"
TSC = PACKAGE / "node_modules" / "typescript" / "bin" / "tsc"


def source_digest() -> str:
    """What dist/ is built from."""
    digest = hashlib.sha256()
    for path in sorted([*(PACKAGE / "src").rglob("*.ts"), PACKAGE / "tsconfig.json", PACKAGE / "package-lock.json"]):
        digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def built_sdk() -> Path:
    """dist/ of the package, compiled if its sources changed since (AssertionError when `make sdk-ts` has
    not installed its tools)."""
    assert NODE.exists(), "the TypeScript SDK's tools are not installed: run `make sdk-ts` (part of `make test`)"
    stamp = PACKAGE / "node_modules" / ".dist-source"
    with (PACKAGE / "node_modules" / ".dist-lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        digest = source_digest()
        if not stamp.exists() or stamp.read_text() != digest or not (PACKAGE / "dist" / "index.js").exists():
            shutil.rmtree(PACKAGE / "dist", ignore_errors=True)
            done = subprocess.run(
                [str(NODE), str(TSC), "-p", "tsconfig.json"], cwd=PACKAGE, capture_output=True, text=True
            )
            assert done.returncode == 0, done.stdout + done.stderr
            stamp.write_text(digest)
    return PACKAGE / "dist"
