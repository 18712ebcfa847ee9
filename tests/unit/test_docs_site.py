"""The documentation site's build: generated reference pages cover what the service serves, and the
strict build (make docs-check) fails on a broken link or anchor rather than publishing it."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from api.mcp.tools import build_tools
from api.operation_table import OPERATIONS
from core.chain import ROOT
from core.config import PREFIX, Settings

# the mkdocs hook, loaded by path as mkdocs loads it
_spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "tools" / "docs" / "hooks.py")
assert _spec is not None and _spec.loader is not None
hooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hooks)


def test_the_http_reference_has_an_entry_for_every_route_and_the_settings_page_every_setting() -> None:
    http = hooks.http_page()
    for op in OPERATIONS:
        if not op.alias_of:
            assert f"{{#{hooks.anchor(op.method, op.path)}}}" in http, op.path
            assert op.summary in http
    settings = hooks.settings_page()
    for name in Settings.__dataclass_fields__:
        assert f"`{PREFIX}{name.upper()}`" in settings
    assert "Seconds between anchors" in settings  # the field's own comment, not a copy
    mcp = hooks.mcp_tools_page()
    for name in build_tools(OPERATIONS):
        assert f"| `{name}`" in mcp, name


def _build(docs: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config.update(docs_dir=str(docs), site_dir=str(tmp_path / "site"), hooks=[str(ROOT / "tools/docs/hooks.py")])
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(tmp_path / "mkdocs.yml")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )


def test_the_strict_build_passes_and_fails_on_a_broken_link_or_anchor(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    ok = _build(docs, tmp_path)
    assert ok.returncode == 0, ok.stderr
    (docs / "index.md").write_text(
        (docs / "index.md").read_text()
        + "\n[gone](reference/nowhere.md) and [no such route](reference/http.md#get-api-nowhere)\n"
    )
    broken = _build(docs, tmp_path)
    assert broken.returncode != 0
    assert "reference/nowhere.md" in broken.stderr and "get-api-nowhere" in broken.stderr, broken.stderr
