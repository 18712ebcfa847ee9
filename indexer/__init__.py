"""Chain following: JSON-RPC client, log fetching, reorg handling, projections into SQLite."""
