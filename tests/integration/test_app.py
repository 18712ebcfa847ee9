"""create_app's configuration rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.app import create_app
from core.config import Settings
from core.deployments import Deployment
from core.store import connect


def test_create_app_needs_a_public_url_off_the_local_chain(tmp_path: Path) -> None:
    """On Base, links the service publishes must not come from a caller's Host header."""
    dep = Deployment(8453, "base", 0, "0x0", "0x" + "00" * 20, False, {})
    db = connect(tmp_path / "b.db")
    key = "0x" + "11" * 32
    try:
        with pytest.raises(ValueError, match="AGENTLEDGER_PUBLIC_URL"):
            create_app(dep, "http://127.0.0.1:9", db, settings=Settings(operator_key=key))
        app = create_app(
            dep, "http://127.0.0.1:9", db, settings=Settings(operator_key=key, public_url="https://l.example")
        )
        assert app is not None
    finally:
        db.close()


def test_create_app_needs_an_operator_key_off_the_local_chain(tmp_path: Path) -> None:
    dep = Deployment(8453, "base", 0, "0x0", "0x" + "00" * 20, False, {})
    db = connect(tmp_path / "k.db")
    try:
        with pytest.raises(ValueError, match="OPERATOR_KEY"):
            create_app(dep, "http://127.0.0.1:9", db, settings=Settings(public_url="https://l.example"))
    finally:
        db.close()
