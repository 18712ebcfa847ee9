"""The agent wallet API under /api/agents (routes), its models and its operation rows."""

from api.wallets.routes import add_wallet_routes, create_wallet_app

__all__ = ["add_wallet_routes", "create_wallet_app"]
