"""The runtime: the service's processes put together (API, jobs, indexer) from configuration."""
