"""The names the rest of the project uses for the store's connection and its errors.

Only core.store knows which database library runs underneath (tests/unit/test_layering.py keeps it
so): a handler, feature or indexer module types a connection as `Conn` and catches `StoreError`,
never a library's own class."""

from __future__ import annotations

from typing import TypeAlias

import apsw

Conn: TypeAlias = apsw.Connection
"""An open connection to the store."""

StoreError: TypeAlias = apsw.Error
"""The base of every error the store's database raises (busy, I/O, constraint, ...)."""

ConstraintViolation: TypeAlias = apsw.ConstraintError
"""A write refused by a UNIQUE, CHECK, NOT NULL or FOREIGN KEY constraint."""
