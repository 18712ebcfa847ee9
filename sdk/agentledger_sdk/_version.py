"""The package version (pyproject reads it; the User-Agent carries it)."""

__version__ = "0.2.0"
