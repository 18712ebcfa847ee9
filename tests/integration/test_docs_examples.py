"""Every example of the documentation runs: the blocks marked `example` (tests/docs_examples.py has the
convention) are run in page order, chain by chain, against one live `make run`, as a reader pastes them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.anvil import free_port
from tests.docs_examples import SHARED, TYPESCRIPT_SDK, Chain, chains, hand_written_pages, prepare_workdir, runnable
from tests.run_kit import run_env, start_run, stop_run, wait_synced

CHAINS = chains(hand_written_pages())


class Run:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.anvil_port, self.api_port = free_port(), free_port()
        self.env = run_env(tmp, self.anvil_port, self.api_port)


@pytest.fixture(scope="module")
def make_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    run = Run(tmp_path_factory.mktemp("make-run"))
    log = run.tmp / "run.log"
    proc = start_run(run.tmp, run.anvil_port, run.api_port, log)
    try:
        wait_synced(run.api_port, proc, log)
        yield run
    finally:
        stop_run(proc)


@pytest.mark.parametrize("name", sorted(set(CHAINS) - {SHARED}))
def test_the_examples_of_a_chain_run_in_page_order(make_run: Run, name: str, tmp_path: Path) -> None:
    workdir = tmp_path / "clone"
    prepare_workdir(workdir, make_run.tmp / "deployments")
    chain = Chain(name, workdir, f"127.0.0.1:{make_run.api_port}", f"127.0.0.1:{make_run.anvil_port}", make_run.env)
    try:
        for block in CHAINS[name]:
            if runnable(block):
                chain.run(block)
    finally:
        chain.close()


def test_typescript_examples_run_once_the_sdk_is_here() -> None:
    typescript = [b.where() for blocks in CHAINS.values() for b in blocks if not runnable(b)]
    if typescript:
        pytest.skip(f"{len(typescript)} TypeScript examples not run: {TYPESCRIPT_SDK} is not in this tree")
    assert TYPESCRIPT_SDK.exists() or not typescript
