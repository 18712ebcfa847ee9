"""The checkout demo (`python -m scripts.demo_checkout`) as the README runs it: against `make run`,
all five buyer steps, then the keys it prints sign in to the dashboard, which shows its order."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import httpx

from core.anvil import free_port
from core.chain import ROOT
from tests.run_kit import run_env, start_run, stop_run, wait_synced


def test_the_demo_walks_checkout_and_prints_keys_that_show_its_order_in_the_dashboard(tmp_path: Path) -> None:
    anvil_port, api_port, log_path = free_port(), free_port(), tmp_path / "run.log"
    api = f"http://127.0.0.1:{api_port}"
    proc = start_run(tmp_path, anvil_port, api_port, log_path)
    try:
        wait_synced(api_port, proc, log_path)
        demo = subprocess.run(
            [
                sys.executable,
                "-m",
                "scripts.demo_checkout",
                "--api",
                api,
                "--rpc",
                f"http://127.0.0.1:{anvil_port}",
                "--deployments",
                str(tmp_path / "deployments"),
            ],
            cwd=ROOT,
            env=run_env(tmp_path, anvil_port, api_port),
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert demo.returncode == 0, demo.stdout + demo.stderr
        summary = json.loads(demo.stdout[demo.stdout.rindex("\n{") :])
        assert summary["dashboard"] == f"{api}/dashboard"
        for side in ("buyer", "provider"):
            assert f"API key {summary[side]['apiKey']}" in demo.stdout  # said as the step happens, too
            with httpx.Client(base_url=api, timeout=10, follow_redirects=True) as browser:
                form = browser.get("/dashboard/sign-in")
                token = re.search(r'name="csrf" value="([^"]+)"', form.text)
                assert token, form.text
                signed = browser.post(
                    "/dashboard/sign-in", data={"key": summary[side]["apiKey"], "csrf": token.group(1)}
                )
                assert signed.status_code == 200 and str(signed.url) == summary["dashboard"], signed.text[:500]
                # the orders panel holds the order, for the buyer who funded it and the provider who delivered
                assert f'data-key="{summary["order"]}"' in signed.text, signed.text[:2000]
    finally:
        stop_run(proc)
