"""The toolchain versions named in ape-config.yaml, package.json and the lock files agree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.chain import ROOT
from core.config import Settings
from core.networks import NETWORKS


def _yaml_value(text: str, key: str) -> str:
    match = re.search(rf"^\s*{key}:\s*(\S+)\s*$", text, re.MULTILINE)
    assert match, key
    return match.group(1).strip("\"'")


def test_ape_config_matches_the_npm_toolchain() -> None:
    ape = (ROOT / "ape-config.yaml").read_text()
    deps = json.loads((ROOT / "package.json").read_text())["dependencies"]
    assert _yaml_value(ape, "contracts_folder") == "contracts"
    assert _yaml_value(ape, "version") == deps["@openzeppelin/contracts"]  # first `version:` is the dependency's
    assert re.search(rf"solidity:\n\s+version: {re.escape(deps['solc'])}\n", ape)
    for net in NETWORKS.values():
        if net.usdc:
            assert net.usdc in ape


def test_npm_lock_pins_the_declared_versions() -> None:
    lock = json.loads((ROOT / "package-lock.json").read_text())
    deps = json.loads((ROOT / "package.json").read_text())["dependencies"]
    for name, version in deps.items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version


def test_python_dependencies_are_pinned_and_locked() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    constraints = (ROOT / "constraints.txt").read_text().lower()
    block = re.search(r"dependencies = \[(.*?)\]", pyproject, re.DOTALL)
    assert block
    pins = re.findall(r'"([A-Za-z0-9_.-]+)==([^"]+)"', block.group(1))
    assert pins
    for name, version in pins:
        assert f"{name.lower()}=={version}" in constraints.replace("_", "-")


def test_settings_from_env_and_toml(tmp_path: Path) -> None:
    cfg = tmp_path / "agentledger.toml"
    cfg.write_text('api_port = 9000\nrpc_url = "http://node:8545"\n')
    s = Settings.load({"AGENTLEDGER_CONFIG": str(cfg), "AGENTLEDGER_API_PORT": "9100"})
    assert s.api_port == 9100  # environment wins over the file
    assert s.rpc_url == "http://node:8545"
    assert Settings.load({}).api_host == "127.0.0.1"
    cfg.write_text("no_such_key = 1\n")
    with pytest.raises(ValueError, match="no_such_key"):
        Settings.load({"AGENTLEDGER_CONFIG": str(cfg)})
    assert Settings.load({}).read_pool_size == 8
    assert Settings.load({"AGENTLEDGER_READ_POOL_SIZE": "0"}).read_pool_size == 0  # reads on the loop
    with pytest.raises(ValueError, match="read_pool_size"):
        Settings.load({"AGENTLEDGER_READ_POOL_SIZE": "-1"})


def test_demo_reads_the_ports_make_run_is_configured_with(monkeypatch: pytest.MonkeyPatch) -> None:
    """scripts.demo_checkout defaults to where `make run` serves."""
    from scripts import demo_checkout

    monkeypatch.setenv("AGENTLEDGER_API_HOST", "127.0.0.2")
    monkeypatch.setenv("AGENTLEDGER_API_PORT", "18080")
    monkeypatch.setenv("AGENTLEDGER_ANVIL_PORT", "18545")
    args = demo_checkout.build_parser().parse_args([])
    assert (args.api, args.rpc) == ("http://127.0.0.2:18080", "http://127.0.0.1:18545")
    monkeypatch.setenv("AGENTLEDGER_RPC_URL", "http://node.example:8545")
    assert demo_checkout.build_parser().parse_args([]).rpc == "http://node.example:8545"


def test_the_docs_document_the_demo_webhooks_earnings_and_fuzzing() -> None:
    """What the README and the documentation must say: the demo's defaults, the webhook keys and bodies,
    the payer's signature, the two earnings totals, the schemathesis command."""
    from scripts.fuzz_api import CHECKS, PHASES

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    readme = " ".join(" ".join(p.read_text().split()) for p in pages)
    for needle in (
        "AGENTLEDGER_API_HOST`/`_API_PORT",  # the demo's defaults
        "Webhook(secret.encode())",  # the Standard Webhooks key forms
        '"whsec_" + base64(secret)',
        '{"event": "job.state_changed", "job_id"',  # the webhook bodies
        '{"event": "decision_logged", "job_id"',
        "Why the payer signs",  # the payer signature on complete
        "reportedEarned (what `/earn` reported",
        "settledEarned (escrow payouts settled on-chain",
        f"--checks {CHECKS}",
        f"--phases {PHASES}",
    ):
        assert needle in readme, needle
