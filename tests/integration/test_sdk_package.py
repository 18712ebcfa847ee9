"""The Python SDK as a user meets it: its wheel, built from sdk/, installs into a fresh virtual
environment (no system site-packages, nothing from this checkout) and the quickstart of sdk/README.md
runs there against a live service on loopback.

Offline: `pip wheel` builds the SDK's wheel and collects its dependencies' wheels from the sources pip
is configured with (on these machines local wheel directories, as `make` installs from); the fresh
environment then installs with --no-index from those wheels only."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.chain import ROOT
from tests.integration.test_mcp_conformance import live_service

SDK = ROOT / "sdk"


def quickstart(readme: str, url: str) -> str:
    """The README's first Python block, pointed at `url`."""
    block = re.search(r"```python\n(.*?)```", readme, re.S)
    assert block is not None, "sdk/README.md has no quickstart"
    return block.group(1).replace("http://127.0.0.1:8080", url)


@pytest.mark.timeout(300)
def test_the_wheel_installs_into_a_fresh_venv_and_runs_the_readme_quickstart(tmp_path: Path) -> None:
    wheels, source = tmp_path / "wheels", tmp_path / "sdk"
    # built from a copy: setuptools writes build/ and *.egg-info beside the sources it builds
    shutil.copytree(SDK, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "scenarios"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run([*pip, "wheel", "--wheel-dir", str(wheels), str(source)], check=True, timeout=240)
    version = re.search(r'__version__ = "([^"]+)"', (SDK / "agentledger_sdk" / "_version.py").read_text())
    assert version is not None
    (built,) = wheels.glob("agentledger_sdk-*.whl")
    assert built.name == f"agentledger_sdk-{version.group(1)}-py3-none-any.whl"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", str(wheels), "agentledger-sdk"],
        check=True,
        timeout=240,
    )
    run_dir = tmp_path / "user"
    run_dir.mkdir()
    with live_service(tmp_path) as url:
        script = run_dir / "quickstart.py"
        script.write_text(
            "import agentledger_sdk, sys\n"
            "print('from', agentledger_sdk.__file__, agentledger_sdk.__version__)\n"
            + quickstart((SDK / "README.md").read_text(), url)
        )
        done = subprocess.run([python, str(script)], cwd=run_dir, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"from {venv}") and lines[0].endswith(version.group(1)), lines[0]
    assert "12.125 0.125 0.25 12.25" in lines, done.stdout  # the earn's split, as the README says
    assert any(line.startswith("422 insufficient_balance") for line in lines), done.stdout
