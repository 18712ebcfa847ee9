"""The service's features, in the order of /api/schema and of the MCP tools: the one list create_app
mounts and installs (api.app) and the indexer takes its followers from (indexer.service).

Adding a feature is one package under core/ (its rules and transactions), one under api/ (its rows and
their runs, exporting FEATURE: api.feature) and one line here (README "How a feature is shaped").
"""

from __future__ import annotations

from api import audit_routes, checkout, dashboard, decisions, hire, ipfs_gateway, marketplace, verification, wallets
from api.feature import Feature
from api.hire import a2a

__all__ = ["FEATURES"]


FEATURES: tuple[Feature, ...] = (
    wallets.FEATURE,
    decisions.FEATURE,
    audit_routes.FEATURE,
    checkout.FEATURE,
    ipfs_gateway.FEATURE,
    hire.FEATURE,
    a2a.FEATURE,
    verification.FEATURE,
    marketplace.FEATURE,
    dashboard.FEATURE,
)
