"""Run slither offline on the build-info that scripts.compile writes, and fail on any High or
Medium finding that is not explained.

    .venv-slither/bin/python tools/slither/check.py [--all]

Runs in its own virtualenv (`make slither` creates `.venv-slither` from
tools/slither/requirements.txt): slither-analyzer pins web3 < 8, the service uses web3 8.

No compiler runs here (none can be downloaded): crytic-compile's hardhat platform parses
contracts/build/build-info/*.json (standard-JSON input and output with ASTs and source maps) and
its compile step, which would run `npx hardhat`, is replaced by that parse alone.

A finding is explained either beside the code (`// slither-disable-next-line <detector>` and a
one-line reason, which slither itself honours) or in tools/slither/triage.json:
{"<detector>": {"<Contract.function or Contract>": "reason"}}; a triage entry that no longer
matches any finding is reported too, so the file cannot rot. Findings in node_modules
(OpenZeppelin) and contracts/test/ (test-only helpers) are not ours and are left out.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from crytic_compile import CryticCompile
from crytic_compile.platform.hardhat import Hardhat, hardhat_like_parsing
from slither import Slither
from slither.detectors import all_detectors
from slither.detectors.abstract_detector import AbstractDetector

ROOT = Path(__file__).resolve().parents[2]
BUILD_INFO = ROOT / "contracts" / "build" / "build-info"
TRIAGE = Path(__file__).with_name("triage.json")
FAILING = ("High", "Medium")


class BuildInfoOnly(Hardhat):
    """The hardhat platform without hardhat: parse the build-info scripts.compile wrote."""

    def compile(self, crytic_compile: CryticCompile, **kwargs: str) -> None:
        if not any(BUILD_INFO.glob("*.json")):
            raise SystemExit(f"no build-info in {BUILD_INFO}: run `python -m scripts.compile` first")
        hardhat_like_parsing(crytic_compile, str(ROOT), BUILD_INFO, str(ROOT))

    def clean(self, **kwargs: str) -> None:
        """Nothing to clean (the hardhat platform would run `npx hardhat clean`)."""


def _where(result: dict[str, Any]) -> str:
    """Contract.function (or Contract) of a finding's first element."""
    for el in result.get("elements", []):
        parent = el.get("type_specific_fields", {}).get("parent", {})
        if el.get("type") == "function":
            return f"{parent.get('name', '?')}.{el['name']}"
        if el.get("type") == "contract":
            return str(el["name"])
        if parent.get("type") == "function":
            grand = parent.get("type_specific_fields", {}).get("parent", {})
            return f"{grand.get('name', '?')}.{parent['name']}"
    return "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="also list Low / Informational / Optimization findings")
    args = parser.parse_args(argv)

    cc = CryticCompile(BuildInfoOnly(str(ROOT)))
    slither = Slither(cc, exclude_dependencies=True, filter_paths=["node_modules/", "contracts/test/"])
    for detector in vars(all_detectors).values():
        if inspect.isclass(detector) and issubclass(detector, AbstractDetector):
            slither.register_detector(detector)
    results = [r for per_detector in slither.run_detectors() for r in per_detector]

    triage: dict[str, dict[str, str]] = json.loads(TRIAGE.read_text()) if TRIAGE.exists() else {}
    used: set[tuple[str, str]] = set()
    failing, explained, other = [], [], []
    for r in sorted(results, key=lambda r: (r["impact"], r["check"], r["description"])):
        check, where = r["check"], _where(r)
        line = f"[{r['impact']}/{r['confidence']}] {check} {where}: {r['description'].strip().splitlines()[0]}"
        if r["impact"] not in FAILING:
            other.append(line)
        elif where in triage.get(check, {}):
            used.add((check, where))
            explained.append(f"{line}\n    triaged: {triage[check][where]}")
        else:
            failing.append(line)
    stale = [f"{c} {w}" for c, entries in triage.items() for w in entries if (c, w) not in used]

    for line in explained:
        print(line)
    if args.all:
        for line in other:
            print(line)
    print(
        f"slither: {len(results)} findings; High/Medium: {len(failing)} unexplained, {len(explained)} triaged "
        f"in {TRIAGE.relative_to(ROOT)}; {len(other)} Low/Informational/Optimization"
        + ("" if args.all else " (--all lists them)")
    )
    for line in failing:
        print(f"UNEXPLAINED {line}", file=sys.stderr)
    for entry in stale:
        print(f"STALE triage entry (matches no finding): {entry}", file=sys.stderr)
    return 1 if failing or stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
