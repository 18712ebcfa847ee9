"""indexer/ holds no SQL text: its transactions, savepoints and connection settings go through
core.store's helpers (begin, commit, rollback, savepoint, transaction, tune_for_indexing), so that the
store alone knows the backend's dialect."""

from __future__ import annotations

import ast
import re
from pathlib import Path

INDEXER = Path(__file__).resolve().parents[2] / "indexer"
SQL = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA|SELECT|INSERT|UPDATE|DELETE|CREATE)\b", re.I)


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def test_no_sql_text_in_the_indexer() -> None:
    found = []
    for path in sorted(INDEXER.rglob("*.py")):
        tree = ast.parse(path.read_text())
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:  # noqa: SIM102
                if SQL.match(node.value):
                    found.append(f"{path.name}:{node.lineno}: {node.value[:60]!r}")
    assert found == []
