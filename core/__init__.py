"""Code shared by the indexer, the API and the operator scripts."""
