"""The documentation's examples, read and run as a reader would paste them.

The marking convention (an HTML comment on the line before a fenced block; it does not render):

- `<!-- example: CHAIN -->`: run this block, in page order, with the blocks of the same CHAIN before it.
  A `sh`/`bash` block runs through bash (`set -eo pipefail`) and what it `export`s is there for the
  later blocks of its chain, as in the reader's terminal; a `python` block runs with `.venv/bin/python`
  and those variables in its environment; a `typescript` block runs with Node 22
  (tools/mcp/node_modules/.bin/node, type stripping) once the TypeScript SDK (sdk/typescript) exists,
  else it is skipped with that reason; `@agentledger/sdk` resolves to that package (built first).
- `<!-- example: CHAIN file=NAME -->`: the block is a file the reader saves as NAME (in the directory
  the commands run in); a later block runs it. A file of the chain `shared` is in every chain's
  directory (the tutorials' common helper, saved once).
- `<!-- example: CHAIN expect="TEXT" -->`: as the first form, and the block's output must contain TEXT.
- `<!-- illustration -->`: not run (an answer shown, a configuration file, a command for another machine).
- `<!-- snippet: NAME -->`: run by a test of its own, which finds it by NAME (the MCP client set-ups:
  tests/integration/test_mcp_clients.py; the README's TypeScript quickstart: test_sdk_typescript.py).

Every fenced block of a hand-written page carries one of them (`unmarked_blocks`), so nothing is
skipped silently. The commands name `make run`'s addresses (127.0.0.1:8080 and :8545); the runner
points them at the run under test. Each chain runs in a directory of its own in which `.venv`,
`tools`, `sdk`, `contracts` are the repository's and `deployments` the run's, as in a clone.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from core.chain import ROOT

DOCS = ROOT / "docs"
NODE = ROOT / "tools" / "mcp" / "node_modules" / ".bin" / "node"
TYPESCRIPT_SDK = ROOT / "sdk" / "typescript"

_FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")
_MARK = re.compile(r"<!--\s*(?P<kind>example|illustration|snippet)\b(?::\s*(?P<args>.*?))?\s*-->")
SHELLS = {"sh", "bash", "shell", "console"}
PYTHONS = {"python", "py"}
TYPESCRIPTS = {"ts", "typescript"}


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    mark: str | None  # "example", "illustration", "snippet" or None
    chain: str = ""
    file: str | None = None
    expect: str | None = None

    def where(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page
        return f"{page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, each with the mark on the line before it (or none)."""
    lines = page.read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m["indent"], m["fence"]
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j])
            j += 1
        prev = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        mark = _MARK.fullmatch(prev)
        block = Block(page, i + 1, m["lang"].lower(), "\n".join(body) + "\n", mark["kind"] if mark else None)
        if mark and mark["kind"] == "example":
            args = shlex.split(mark["args"] or "")
            if not args:
                raise ValueError(f"{block.where()}: `example:` names no chain")
            block.chain = args[0]
            for arg in args[1:]:
                key, _, value = arg.partition("=")
                if key == "file":
                    block.file = value
                elif key == "expect":
                    block.expect = value
                else:
                    raise ValueError(f"{block.where()}: unknown example attribute {arg!r}")
        found.append(block)
        i = j + 1
    return found


def hand_written_pages() -> list[Path]:
    """Every page under docs/ (the reference pages are generated at build time and have no file), in
    reading order: the order of mkdocs.yml's nav, then any page it does not list."""
    import yaml

    def walk(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, dict):
            return [p for v in node.values() for p in walk(v)]
        if isinstance(node, list):
            return [p for v in node for p in walk(v)]
        return []

    nav = [DOCS / p for p in walk(yaml.safe_load((ROOT / "mkdocs.yml").read_text()).get("nav", []))]
    listed = [p for p in nav if p.exists()]
    return listed + sorted(set(DOCS.rglob("*.md")) - set(listed))


README = ROOT / "README.md"


def pages_with_examples() -> list[Path]:
    """The pages whose `example` blocks run: the site's, then the README (its quickstart)."""
    return [*hand_written_pages(), README]


def unmarked_blocks(pages: list[Path]) -> list[str]:
    return [b.where() for p in pages for b in blocks(p) if b.mark is None]


@dataclass
class Chain:
    """One chain's terminal: its working directory, its exported variables, its background processes."""

    name: str
    workdir: Path
    api: str  # host:port of the run under test
    rpc: str
    env: dict[str, str]
    state: Path = field(init=False)
    groups: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.state = self.workdir / ".exported"
        self.state.write_text("")
        for block in chains(pages_with_examples()).get(SHARED, []):
            assert block.file, f"{block.where()}: the shared chain holds files only"
            self.run(block)

    def adapt(self, code: str) -> str:
        return code.replace("127.0.0.1:8080", self.api).replace("127.0.0.1:8545", self.rpc)

    def run(self, block: Block, timeout: float = 180) -> str:
        code = self.adapt(block.code)
        if block.file:
            (self.workdir / block.file).write_text(code)
            return ""
        if block.lang in SHELLS:
            script = f"set -eo pipefail\nsource {self.state}\n{code}\nexport -p > {self.state}\n"
            argv = ["bash", "-c", script]
        elif block.lang in PYTHONS:
            path = self.workdir / f".block{block.line}.py"
            path.write_text(code)
            argv = ["bash", "-c", f"source {self.state} && exec .venv/bin/python {path}"]
        elif block.lang in TYPESCRIPTS:
            path = self.workdir / f".block{block.line}.ts"
            path.write_text(code)
            argv = ["bash", "-c", f"source {self.state} && exec {NODE} --experimental-strip-types {path}"]
        else:
            raise AssertionError(f"{block.where()}: no way to run a {block.lang!r} block")
        proc = subprocess.Popen(
            argv,
            cwd=self.workdir,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: what it starts in the background is stopped at the end
        )
        self.groups.append(proc.pid)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            raise AssertionError(f"{block.where()} ran past {timeout} s:\n{code}\n--- output ---\n{out}") from None
        if proc.returncode != 0:
            raise AssertionError(f"{block.where()} exited {proc.returncode}:\n{code}\n--- output ---\n{out}")
        if block.expect is not None and block.expect not in out:
            raise AssertionError(f"{block.where()}: {block.expect!r} not in its output:\n{out}")
        return out

    def close(self) -> None:
        for group in self.groups:
            with contextlib.suppress(ProcessLookupError):  # it ended by itself
                os.killpg(group, signal.SIGTERM)


def chains(pages: list[Path]) -> dict[str, list[Block]]:
    """The examples to run, by chain, in page order (a chain may go on over several pages)."""
    out: dict[str, list[Block]] = {}
    for page in pages:
        for b in blocks(page):
            if b.mark == "example":
                out.setdefault(b.chain, []).append(b)
    return out


SHARED = "shared"


def prepare_workdir(workdir: Path, deployments: Path) -> None:
    """A directory that looks like the clone's root to the commands the docs give, with the shared files."""
    workdir.mkdir(parents=True, exist_ok=True)
    for name in (".venv", "tools", "sdk", "contracts"):
        (workdir / name).symlink_to(ROOT / name)
    (workdir / "deployments").symlink_to(deployments)
    if TYPESCRIPT_SDK.exists():  # `import ... from "@agentledger/sdk"` finds the package, as after npm install
        (workdir / "node_modules" / "@agentledger").mkdir(parents=True)
        (workdir / "node_modules" / "@agentledger" / "sdk").symlink_to(TYPESCRIPT_SDK)


def runnable(block: Block) -> bool:
    """False for a TypeScript block while the TypeScript SDK is not in the tree (reported as skipped)."""
    return block.lang not in TYPESCRIPTS or TYPESCRIPT_SDK.exists()


def main() -> None:
    """Run chains against a `make run` already up (while writing a page): python -m tests.docs_examples
    --data-dir var --anvil-port 8545 --api-port 8080 [CHAIN ...]"""
    import argparse
    import tempfile

    from tests.run_kit import run_env

    parser = argparse.ArgumentParser()
    parser.add_argument("chain", nargs="*")
    parser.add_argument("--run-dir", type=Path, required=True, help="the run's dir: deployments/ and var/ in it")
    parser.add_argument("--anvil-port", type=int, default=8545)
    parser.add_argument("--api-port", type=int, default=8080)
    parser.add_argument("--clone", type=Path, help="run in this clone's root itself (a walkthrough), not a scratch dir")
    args = parser.parse_args()
    found = chains(pages_with_examples())
    for name in args.chain or sorted(set(found) - {SHARED}):
        if args.clone:
            workdir = args.clone
        else:
            workdir = Path(tempfile.mkdtemp(prefix=f"docs-{name}-"))
            prepare_workdir(workdir, args.run_dir / "deployments")
        # in a clone, the reader's own shell (its AGENTLEDGER_* settings included); else the run's
        env = dict(os.environ) if args.clone else run_env(args.run_dir, args.anvil_port, args.api_port)
        chain = Chain(name, workdir, f"127.0.0.1:{args.api_port}", f"127.0.0.1:{args.anvil_port}", env)
        try:
            for block in found[name]:
                if runnable(block):
                    print(f"--- {block.where()}", flush=True)
                    print(chain.run(block).rstrip(), flush=True)
        finally:
            chain.close()


if __name__ == "__main__":
    main()
