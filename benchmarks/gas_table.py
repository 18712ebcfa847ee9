"""Gas per contract operation on a fresh anvil, printed as a Markdown table (median of runs).

    python -m benchmarks.gas_table [--runs 3]

Each run deploys the whole system afresh and performs every operation once, so cold/warm
storage effects are the same from run to run; the figure is gasUsed from the receipt (for the
inclusion-proof view, eth_estimateGas of the call at 2^20 leaves). Fundings carry the buyer's
real EIP-712 consent, self-wallet changes the new wallet's EIP-712 proof, hires the provider's
published SLA; "setSelfWallet (after a sale)" is the new owner naming a wallet after `settle`
reset it (scripts.devchain.run_scenario).
"""

from __future__ import annotations

import argparse
import statistics

from web3 import Web3

from core.anvil import Anvil
from core.chain import connect
from scripts.compile import compile_contracts
from scripts.devchain import deploy_dev_system, run_scenario


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    compile_contracts()
    results: dict[str, list[int]] = {}
    for _ in range(args.runs):
        with Anvil() as node:
            w3: Web3 = connect(node.rpc_url)
            for label, used in run_scenario(deploy_dev_system(w3)).items():
                results.setdefault(label, []).append(used)
    print(f"| operation | gas (median of {args.runs} runs) |")
    print("|---|---:|")
    for label, values in results.items():
        print(f"| {label} | {int(statistics.median(values)):,} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
