"""SQL of the MCP toolsets a holder enabled (table mcp_enabled_toolsets). The rules are api.mcp.toolsets'."""

from __future__ import annotations

from core.store.types import Conn


def enable(conn: Conn, holder: str, toolset: str, now: float) -> None:
    conn.execute(
        "INSERT INTO mcp_enabled_toolsets (holder, toolset, enabled_at) VALUES (?, ?, ?)"
        " ON CONFLICT (holder, toolset) DO NOTHING",
        (holder, toolset, now),
    )


def enabled(conn: Conn, holder: str) -> frozenset[str]:
    rows = conn.execute("SELECT toolset FROM mcp_enabled_toolsets WHERE holder = ?", (holder,)).fetchall()
    return frozenset(str(row[0]) for row in rows)


def purge_sessions(conn: Conn, enabled_before: float) -> None:
    """Drop what 2025-11-25 sessions enabled before `enabled_before` (a key's own rows stay)."""
    conn.execute(
        "DELETE FROM mcp_enabled_toolsets WHERE substr(holder, 1, 8) = 'session:' AND enabled_at < ?",
        (enabled_before,),
    )
