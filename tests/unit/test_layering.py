"""The layering rules of README "How a feature is shaped", read from the imports of every module.

- core/ (rules and transactions) imports neither api/, indexer/, scripts/ nor service/, and nothing
  of the web server (aiohttp.web: applications, requests, responses);
- core/store/ (SQL only) imports nothing of the project but core.store and merkle;
- indexer/ imports neither scripts/ nor service/, and no feature: it reaches the features only through
  their one list (api.features.FEATURES); its two phases (historical, realtime) never import each
  other: what they share is the step (indexer.step) and the fetch helpers (indexer.fetch);
- a feature (FEATURES below: its package under api/ and its package under core/) imports plumbing and
  its own modules, never another feature, except the wallets (every feature's agents and balances);
  the dashboard, which shows them all, reads every feature;
- plumbing (api's shared modules, and core outside the features) imports no feature; only the
  composition modules (api.app, api.features, api.operation_table) put features together;
- every module of api/ is plumbing, composition or a feature's;
- packages used from outside name their public surface in __all__;
- only core/store/ imports a database driver (apsw, psycopg): everything else types a connection as
  core.store.Conn and catches core.store.StoreError, so no module outside the store knows the backend;
- no app key or class field outside core/store holds a connection: reads run in core.store.reads'
  `run`, writes in the committer's.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "api", "indexer", "merkle", "scripts", "service")
#: api's shared modules (a package counts with its modules): what every feature's HTTP side uses.
API_PLUMBING = (
    "api.http",
    "api.errors",
    "api.auth",
    "api.idempotency",
    "api.models",
    "api.operation",
    "api.policy",
    "api.feature",
    "api.health",
    "api.openapi",
    "api.agent_card",
    "api.metrics",
    "api.mcp",
    "api.asgi",
)
API_COMPOSITION = frozenset({"api.app", "api.features", "api.operation_table", "api"})
#: Each feature's packages (or single modules) under api/ and core/.
FEATURES: dict[str, tuple[str, ...]] = {
    "wallets": ("api.wallets", "core.wallets"),
    # verification: the decision log's public checks and discovery document (its own FEATURES entry
    # only for its place in /api/schema)
    "decisions": ("api.decisions", "api.verification", "core.decisions"),
    "audit": ("api.audit_routes",),
    "ipfs": ("api.ipfs_gateway",),
    "checkout": ("api.checkout", "core.checkout", "core.deliverables"),
    "hire": ("api.hire", "core.hire"),
    "marketplace": ("api.marketplace", "core.marketplace"),
    "dashboard": ("api.dashboard", "core.dashboard"),
}
#: Features any feature may import.
SHARED_FEATURES = frozenset({"wallets"})
#: Features that may import any feature.
READS_EVERY_FEATURE = frozenset({"dashboard"})
#: What of api/ the indexer may import: the features' one list and the type of its entries.
INDEXER_REACHES = frozenset({"api.features", "api.feature"})
INDEXER_PHASES = frozenset({"indexer.historical", "indexer.realtime"})


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            out[module_name(path)] = path
    return out


MODULES = project_modules()


def imports_of(path: Path) -> set[str]:
    """The project modules `path` imports (for `from a.b import c`: a.b.c when that is a module, else a.b),
    and aiohttp.web when it imports the web server."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in MODULES or candidate == "aiohttp.web" else node.module)
    return {name for name in found if name.split(".")[0] in PACKAGES or _in(name, "aiohttp.web")}


DATABASE_DRIVERS = frozenset({"apsw", "psycopg", "psycopg_pool"})


def drivers_of(path: Path) -> set[str]:
    """The database drivers `path` imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found & DATABASE_DRIVERS


def _in(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def feature_of(name: str) -> str | None:
    """The feature module `name` belongs to (api.wallets.routes -> wallets), None for any other."""
    for feature, homes in FEATURES.items():
        if any(_in(name, home) for home in homes):
            return feature
    return None


def is_plumbing(name: str) -> bool:
    if _in(name, "api"):
        return any(_in(name, p) for p in API_PLUMBING)
    return _in(name, "core") and feature_of(name) is None


def violations(name: str, imported: set[str]) -> list[str]:
    out = []
    mine = feature_of(name)
    for dep in sorted(imported):
        theirs = feature_of(dep)
        if _in(name, "core.store") and not (_in(dep, "core.store") or _in(dep, "merkle")):
            out.append(f"{name} (the store: SQL only) imports {dep}")
        elif _in(name, "core") and any(_in(dep, p) for p in ("api", "indexer", "scripts", "service", "aiohttp.web")):
            out.append(f"{name} (core) imports {dep}")
        elif _in(name, "indexer") and (
            any(_in(dep, p) for p in ("scripts", "service")) or (_in(dep, "api") and dep not in INDEXER_REACHES)
        ):
            out.append(f"{name} (indexer) imports {dep}")
        elif _in(name, "indexer") and theirs is not None:
            out.append(f"{name} (indexer) imports the feature module {dep} (features come through api.features)")
        elif name in INDEXER_PHASES and dep in INDEXER_PHASES and dep != name:
            out.append(f"{name} (an indexer phase) imports the other phase {dep}")
        elif is_plumbing(name) and theirs is not None:
            out.append(f"{name} (plumbing) imports the feature module {dep}")
        elif (
            mine is not None
            and theirs is not None
            and theirs != mine
            and theirs not in SHARED_FEATURES
            and mine not in READS_EVERY_FEATURE
        ):
            out.append(f"{name} (feature {mine}) imports {dep} (feature {theirs})")
    return out


def test_every_module_keeps_to_its_layer() -> None:
    found = [v for name, path in MODULES.items() for v in violations(name, imports_of(path))]
    assert found == []


def test_every_api_module_is_plumbing_composition_or_a_feature() -> None:
    loose = [
        name
        for name in MODULES
        if _in(name, "api") and not (is_plumbing(name) or name in API_COMPOSITION or feature_of(name) is not None)
    ]
    assert loose == []


@pytest.mark.parametrize(
    ("name", "imported", "broken"),
    [
        ("core.wallets", {"api.http"}, True),
        ("core.checkout.funding", {"indexer.sync"}, True),
        ("core.checkout.funding", {"aiohttp.web"}, True),
        ("core.egress", {"core.errors"}, False),
        ("core.store.orders", {"core.audit"}, True),
        ("core.store.orders", {"core.store.audit", "merkle"}, False),
        ("indexer.sync", {"scripts.deploy"}, True),
        ("indexer.realtime", {"indexer.historical"}, True),
        ("indexer.realtime", {"indexer.step", "indexer.fetch"}, False),
        ("indexer.sync", {"indexer.historical", "indexer.realtime"}, False),
        ("indexer.sync", {"core.hire.follower"}, True),
        ("indexer.sync", {"api.hire"}, True),
        ("indexer.service", {"api.features", "api.feature", "core.followers"}, False),
        ("api.checkout.routes", {"api.hire"}, True),
        ("api.checkout.routes", {"core.marketplace.trading"}, True),
        ("core.hire.escrow", {"core.checkout.orders"}, True),
        ("api.checkout.routes", {"api.checkout.models", "core.checkout.sessions", "api.http", "api.auth"}, False),
        ("api.hire.routes", {"api.wallets.models", "core.wallets"}, False),
        ("api.dashboard.owner", {"core.hire", "core.marketplace", "core.dashboard.owner"}, False),
        ("api.wallets.routes", {"api.wallets.models"}, False),
        ("api.http", {"core.hire.context"}, True),
        ("api.health", {"api.wallets"}, True),
        ("core.jobs", {"core.checkout.sweep"}, True),
        ("api.features", {"api.checkout", "api.hire", "api.wallets"}, False),
        ("api.app", {"api.features", "api.health"}, False),
    ],
)
def test_the_rules_catch_what_they_should(name: str, imported: set[str], broken: bool) -> None:
    """The checker itself: each rule fires on a violation and stays quiet on what is allowed."""
    assert bool(violations(name, imported)) is broken


def test_the_import_reader_sees_the_web_server() -> None:
    probe = ROOT / "core" / ".probe_web.py"
    try:
        probe.write_text("from aiohttp import web, ClientSession\n")
        assert "aiohttp.web" in imports_of(probe)
        probe.write_text("from aiohttp import ClientSession\n")
        assert imports_of(probe) == set()
    finally:
        probe.unlink()


#: The backends' own modules (core.store.backend's protocol, implemented once each).
BACKEND_MODULES = frozenset(
    {"core.store.sqlite", "core.store.pg", "core.store.pg_schema", "core.store.pg_reorg", "core.store.pg_ddl"}
)
#: Who may import a backend module besides the backends: the module that picks one for a location or a
#: connection, and the package's re-export of the SQLite file opener (scripts and tests open files).
BACKEND_CHOOSERS = {"core.store.backend": BACKEND_MODULES, "core.store": frozenset({"core.store.sqlite"})}


def runtime_imports_of(path: Path) -> set[str]:
    """imports_of without the imports under `if TYPE_CHECKING:` (annotations only: no import at run time)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            node.body = [ast.Pass()]
    copy = path.with_name(f".{path.name}.runtime")  # imports_of reads a file: give it the pruned tree
    try:
        copy.write_text(ast.unparse(tree))
        return imports_of(copy)
    finally:
        copy.unlink()


def test_the_backend_is_chosen_in_one_place() -> None:
    """What differs between SQLite and PostgreSQL is core.store.backend's protocol: no module outside the
    backends imports one of them (but the one that picks it), and none tells them apart by the class of
    its connection."""
    found = []
    for name, path in MODULES.items():
        if name in BACKEND_MODULES:
            continue
        reached = imports_of(path) & BACKEND_MODULES
        if reached - BACKEND_CHOOSERS.get(name, frozenset()):
            found.append(f"{name} imports {sorted(reached)}")
        if "PostgresConnection" in path.read_text():
            found.append(f"{name} names PostgresConnection")
    assert found == []


def test_the_store_has_no_import_cycle() -> None:
    """No two modules of core.store import each other, directly or around a circle (imports inside
    functions count: a lazy import only hides a circle)."""
    store = {name: path for name, path in MODULES.items() if _in(name, "core.store") and name != "core.store"}
    graph = {name: runtime_imports_of(path) & set(store) for name, path in store.items()}
    cycles = []
    for start in graph:
        stack = [(start, [start])]
        while stack:
            node, trail = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    cycles.append(" -> ".join([*trail, nxt]))
                elif nxt not in trail and len(trail) < len(graph):
                    stack.append((nxt, [*trail, nxt]))
    assert cycles == []


def test_only_the_store_imports_a_database_driver() -> None:
    found = {name: drivers_of(path) for name, path in MODULES.items() if not _in(name, "core.store")}
    assert {name: drivers for name, drivers in found.items() if drivers} == {}
    assert drivers_of(ROOT / "core" / "store" / "sqlite.py") == {"apsw"}  # the check sees an import when there is one


def test_packages_name_their_public_surface() -> None:
    missing = [
        name
        for name, path in MODULES.items()
        if path.name == "__init__.py" and name.count(".") >= 1 and "__all__" not in path.read_text()
    ]
    assert missing == []


#: Classes outside core/store that hold a connection: the dashboard's views, each built and rendered
#: inside one read function (core.store.reads) and dropped when it returns.
CONNECTION_HOLDERS = frozenset({"api.dashboard.operator.OperatorView", "api.dashboard.owner.OwnerView"})


def connection_holders(name: str, source: str) -> set[str]:
    """Classes of module `name` with a field typed with Conn, and app keys of a Conn (`<module>.AppKey`)."""
    tree = ast.parse(source)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and "Conn" in ast.unparse(item.annotation):
                    found.add(f"{name}.{node.name}")
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("AppKey") and "Conn" in ast.unparse(node):
            found.add(f"{name}.AppKey")
    return found


def test_no_handler_or_feature_keeps_a_connection() -> None:
    """Reads run in `await reads.run(fn)` (on PostgreSQL in a worker thread, on a pooled connection),
    writes in the committer's `run`: a connection lives only inside such a function. An app key or a
    context field holding one would let a handler read on the event loop again, or across an await."""
    found: set[str] = set()
    for name, path in MODULES.items():
        if not _in(name, "core.store"):
            found |= connection_holders(name, path.read_text())
    assert found == CONNECTION_HOLDERS
    # the check sees what it looks for
    assert connection_holders("m", "class C:\n    reader: Conn\n") == {"m.C"}
    assert connection_holders("m", 'K = web.AppKey("read_db", Conn)\n') == {"m.AppKey"}
    assert connection_holders("m", "class C:\n    reads: Reads\n") == set()


def _top_level_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_the_service_and_the_sdk_stay_apart() -> None:
    """The service never imports its client (receivers' checks such as the webhook verifiers live in
    the SDK; the service only signs), and the SDK, shipped alone as a wheel, imports none of the
    service's packages."""
    assert [name for name, path in MODULES.items() if "agentledger_sdk" in _top_level_imports(path)] == []
    sdk = sorted((ROOT / "sdk" / "agentledger_sdk").rglob("*.py"))
    assert sdk and [p.name for p in sdk if _top_level_imports(p) & set(PACKAGES)] == []
