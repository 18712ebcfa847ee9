"""The aiohttp application: routes, request models, auth, webhooks, MCP, pages."""
