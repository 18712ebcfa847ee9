"""The TypeScript SDK (sdk/typescript, npm @agentledger/sdk) on Node 22 from npm: its generated types are
those of the document the service serves; strict tsc passes on it, its scenarios, examples and tests; its
node tests pass (amounts, JSON without floats, retries against a loopback server, proofs, webhook
signatures); and against one live service (the session anvil, the indexer as its own process) every
shared end-to-end scenario of sdk/scenarios/scenarios.json has a TypeScript script that passes (or is
named in NOT_YET), the wallet example is exact, and the `npm pack` tarball installs into an empty folder
and runs the package README's quickstart.

The package is compiled once (tsc on the sources; tsc --noEmit on the scripts); the scripts run as
TypeScript through Node 22's type stripping. Installed by `make sdk-ts` (part of `make test`)."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from api.openapi import document
from api.operation_table import OPERATIONS
from tests.integration.chainkit import USDC, System
from tests.integration.test_checkout_e2e import World, running
from tests.ts_kit import built_sdk

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "sdk" / "typescript"
SCENARIOS = ROOT / "sdk" / "scenarios" / "scenarios.json"
NODE = PACKAGE / "node_modules" / "node" / "bin" / "node"
TSC = PACKAGE / "node_modules" / "typescript" / "bin" / "tsc"

#: Scenarios of sdk/scenarios/scenarios.json with no TypeScript script yet (each fails the test once a
#: script exists, so the list only shrinks).
NOT_YET: frozenset[str] = frozenset()


def node(*args: str, cwd: Path = PACKAGE, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Run Node 22 (from npm) and answer its stdout; fail with its output when it fails."""
    if not NODE.exists():
        pytest.fail("the TypeScript SDK's tools are not installed: run `make sdk-ts` (part of `make test`)")
    proc = subprocess.run(
        [str(NODE), *args], cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout
    )
    said = f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    assert proc.returncode == 0, f"node {' '.join(args)} exited {proc.returncode}:\n{said}"
    return proc.stdout


@pytest.fixture(scope="module")
def built() -> Path:
    """The package compiled to dist/ (what its scripts and `npm pack` use)."""
    return built_sdk()


def synced(base: str, timeout: float = 60.0) -> None:
    """Until the service's indexer (a process of its own) follows the chain: the scripts wait on what it
    projects, and a process stopped before it is up dies of the signal instead of ending cleanly."""
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = requests.get(base + "/healthz", timeout=10).json()["indexer"]["state"]
        if state == "synced":
            return
        time.sleep(0.05)
    pytest.fail(f"the indexer did not sync in {timeout} s (state {state})")


@dataclass
class Live:
    world: World
    env: dict[str, str]


@pytest.fixture(scope="module")
def live(deployed: System, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """One service for the module (the session anvil inside a snapshot reverted afterwards) with its indexer,
    served from a thread of its own while node runs the scripts as child processes."""
    system = deployed
    snap = system.w3.provider.make_request("evm_snapshot", [])  # type: ignore[arg-type]
    keys = system.users[6:10]
    for user in keys:
        system.mint_usdc(user.address, 10_000 * USDC)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    ready: Future[World] = Future()
    stop = asyncio.Event()

    async def serve() -> None:
        try:
            # the indexer as `python -m indexer` runs it: every feature's follower (escrow, drop) installed
            async with running(tmp_path_factory.mktemp("sdk-ts"), system, indexer="process") as world:
                ready.set_result(world)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    task = asyncio.run_coroutine_threadsafe(serve(), loop)
    try:
        world = ready.result(60)
        synced(world.base.rstrip("/"))
        env = {
            "AGENTLEDGER_URL": world.base.rstrip("/"),
            "AGENTLEDGER_RPC_URL": system.w3.provider.endpoint_uri,  # type: ignore[attr-defined]
            "AGENTLEDGER_PRIVATE_KEYS": ",".join("0x" + bytes(u.key).hex() for u in keys),
        }
        yield Live(world, env)
    finally:
        loop.call_soon_threadsafe(stop.set)
        task.result(60)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
        system.w3.provider.make_request("evm_revert", [snap["result"]])  # type: ignore[arg-type]


# ---- the package ---------------------------------------------------------------------------------


def test_generated_types_are_those_of_the_served_document(tmp_path: Path) -> None:
    """src/generated is what scripts/generate.mjs writes from the document (`make sdk-types` rewrites it)."""
    doc = tmp_path / "openapi.json"
    doc.write_text(json.dumps(document(OPERATIONS)))
    out = tmp_path / "generated"
    out.mkdir()
    node("scripts/generate.mjs", str(doc), str(out))
    for name in ("schema.ts", "codes.ts"):
        fresh, kept = (out / name).read_text(), (PACKAGE / "src" / "generated" / name).read_text()
        assert fresh == kept, f"sdk/typescript/src/generated/{name} is stale: run `make sdk-types`"


def test_strict_tsc_on_the_package_its_scenarios_and_examples(built: Path) -> None:
    config = json.loads((PACKAGE / "tsconfig.json").read_text())["compilerOptions"]
    assert config["strict"] is True and config["noUncheckedIndexedAccess"] is True
    # the package README's quickstart is examples/quickstart.ts, so it is checked too
    assert readme_quickstart() == (PACKAGE / "examples" / "quickstart.ts").read_text()
    node(str(TSC), "-p", "tsconfig.check.json")
    assert (built / "index.js").exists() and (built / "index.d.ts").exists()
    # for browsers too: nothing of Node's in what the package ships (fetch, WebCrypto, TextEncoder only)
    for js in built.rglob("*.js"):
        assert not re.search(r"""from ["']node:|\bprocess\.|\bBuffer\b|require\(""", js.read_text()), js


def test_node_tests(built: Path) -> None:
    """The package's own tests (node:test): amounts, JSON without floats, retries and idempotency keys
    against an HTTP server on loopback, webhook signatures."""
    out = node("--test", "--test-reporter=spec", *sorted(str(p) for p in (PACKAGE / "test").glob("*.test.ts")))
    assert re.search(r"ℹ fail 0", out) and not re.search(r"ℹ pass 0\b", out), out[-3000:]


# ---- the shared scenarios --------------------------------------------------------------------------


def scenario_names() -> list[str]:
    names: list[str] = list(json.loads(SCENARIOS.read_text())["scenarios"])
    return names


def test_every_scenario_has_a_script_or_is_listed_as_not_yet() -> None:
    names = set(scenario_names())
    scripts = {p.stem for p in (PACKAGE / "scenarios").glob("*.ts")} - {"lib"}
    assert names >= NOT_YET, f"NOT_YET names unknown scenarios: {sorted(NOT_YET - names)}"
    assert not (NOT_YET & scripts), f"these now have scripts: take them off NOT_YET: {sorted(NOT_YET & scripts)}"
    assert names - NOT_YET <= scripts, f"scenarios without a TypeScript script: {sorted(names - NOT_YET - scripts)}"
    assert scripts <= names, f"scripts of scenarios scenarios.json does not list: {sorted(scripts - names)}"


def scenario_passes(name: str, env: dict[str, str]) -> None:
    out = node(f"scenarios/{name}.ts", env=env)
    summary: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    assert summary["scenario"] == name and summary["ok"] is True, summary


def wallet_example_is_exact(env: dict[str, str]) -> None:
    """examples/wallet.ts: spend, compound, memory, brain, network against the service, amounts exact."""
    got = json.loads(node("examples/wallet.ts", env=env).strip().splitlines()[-1])
    assert got["spent"] == "12.345678" and got["balanceAfterSpend"] == "85.654322", got
    assert got["moved"] == "8.565432" and got["reinvested"] == "8.565432" and got["balance"] == "77.08889", got
    assert got["accounted"] == "98", got  # what was credited: every micro-USDC is somewhere
    assert got["memory"] == {"next": "shorts", "budget": 0.5, "tags": ["a", "b"]}, got
    assert got["totalSold"] == 1 and got["networkAgents"] >= 1 and got["refused"] == "insufficient_balance", got


# ---- packaging --------------------------------------------------------------------------------------


def readme_quickstart() -> str:
    text = (PACKAGE / "README.md").read_text()
    found = re.search(r"<!-- snippet: typescript-quickstart -->\s*```ts\n(.*?)```", text, re.S)
    assert found, "sdk/typescript/README.md has no quickstart (```ts after <!-- snippet: typescript-quickstart -->)"
    return found.group(1)


def packed_quickstart_runs(env: dict[str, str], tmp_path: Path) -> None:
    npm = ["npm"]  # the system's npm client (packing and installing do not need Node 22)
    pack = subprocess.run(
        [*npm, "pack", "--json", "--pack-destination", str(tmp_path)],
        cwd=PACKAGE, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert pack.returncode == 0, pack.stderr
    packed = json.loads(pack.stdout)[0]
    files = {f["path"] for f in packed["files"]}
    assert {"dist/index.js", "dist/index.d.ts", "README.md", "CHANGELOG.md", "package.json"} <= files, files
    assert not {f for f in files if f.startswith(("src/", "scenarios/", "test/", "node_modules/"))}, files
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text(json.dumps({"name": "quickstart", "private": True, "type": "module"}))
    install = subprocess.run(
        [*npm, "install", "--no-audit", "--no-fund", "--prefer-offline", str(tmp_path / packed["filename"])],
        cwd=app, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    (app / "quickstart.ts").write_text(readme_quickstart())
    out = node("quickstart.ts", cwd=app, env={"AGENTLEDGER_URL": env["AGENTLEDGER_URL"]})
    assert "ownerCut: '12.125', agentCut: '0.125', serviceCut: '0.25'" in out, out
    assert "totalEarned: '25', balance: '24.5', totalTransactions: 3" in out, out


# ---- against one live service ------------------------------------------------------------------------


def test_scenarios_examples_and_the_packed_quickstart_against_a_live_service(
    built: Path, live: Live, tmp_path: Path
) -> None:
    """Every shared scenario (sdk/scenarios/scenarios.json) but NOT_YET, the wallet example, and the README
    quickstart from the `npm pack` tarball installed into an empty folder. One test, so that pytest-xdist
    never starts a second service for this module; every part runs, and each failure is reported."""
    parts: dict[str, Callable[[], None]] = {
        **{
            f"scenario {n}": functools.partial(scenario_passes, n, live.env)
            for n in scenario_names()
            if n not in NOT_YET
        },
        "examples/wallet.ts": functools.partial(wallet_example_is_exact, live.env),
        "npm pack + README quickstart": functools.partial(packed_quickstart_runs, live.env, tmp_path),
    }
    failed: dict[str, str] = {}
    for name, part in parts.items():
        try:
            part()
        except AssertionError as exc:
            failed[name] = str(exc)
    assert not failed, "\n\n".join(f"{name}: {why}" for name, why in failed.items())
