"""Every example of the documentation (docs/ and the README) runs: the blocks marked `example`
(tests/docs_examples.py has the convention) are run in page order, chain by chain, against one live
`make run`, as a reader pastes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.anvil import free_port
from tests.docs_examples import (
    SHARED,
    TYPESCRIPT_SDK,
    TYPESCRIPTS,
    Chain,
    chains,
    pages_with_examples,
    prepare_workdir,
    runnable,
)
from tests.run_kit import run_env, start_run, stop_run, wait_synced
from tests.ts_kit import built_sdk

CHAINS = chains(pages_with_examples())


def test_every_example_chain_runs_in_page_order_against_one_make_run(tmp_path: Path) -> None:
    """One `make run` for every chain (they share it as readers share theirs: each registers its own
    agents), the chains one after another, each in its own directory."""
    anvil_port, api_port, log = free_port(), free_port(), tmp_path / "run.log"
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    if any(b.lang in TYPESCRIPTS and runnable(b) for blocks in CHAINS.values() for b in blocks):
        built_sdk()  # what `import ... from "@agentledger/sdk"` loads
    proc = start_run(run_dir, anvil_port, api_port, log)
    try:
        wait_synced(api_port, proc, log)
        env = run_env(run_dir, anvil_port, api_port)
        ran = []
        for name in sorted(set(CHAINS) - {SHARED}):
            workdir = tmp_path / f"clone-{name}"
            prepare_workdir(workdir, run_dir / "deployments")
            chain = Chain(name, workdir, f"127.0.0.1:{api_port}", f"127.0.0.1:{anvil_port}", env)
            try:
                for block in CHAINS[name]:
                    if runnable(block):
                        chain.run(block)
                        ran.append(block.where())
            finally:
                chain.close()
        assert len(ran) >= 20, ran  # the tutorials' examples were found and run
    finally:
        stop_run(proc)


def test_typescript_examples_run_once_the_sdk_is_here() -> None:
    typescript = [b.where() for blocks in CHAINS.values() for b in blocks if not runnable(b)]
    if typescript:
        pytest.skip(f"{len(typescript)} TypeScript examples not run: {TYPESCRIPT_SDK} is not in this tree")
