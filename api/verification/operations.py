"""The verification rows of the operation table (/api/schema, MCP tools and resources)."""

from __future__ import annotations

from api.operation import Operation
from api.verification import routes
from api.verification.models import DecisionLoggingDiscovery, FormatQuery, HtmlPage, Methodology, Verification

OPERATIONS: list[Operation] = [
    Operation(
        "GET",
        "/verify/{audit_id}",
        "verifyEntry",
        "Verify an audit entry (HTML, or JSON with Accept: application/json or ?format=json)",
        Verification,
        query=FormatQuery,
        response_alternatives={"text/html": HtmlPage},
        auth="none",
        errors={404: ("entry_not_found",)},
        tags=("decisions",),
        path_params={"audit_id": "the entry's integer audit_id"},
        run=routes.run_verify,
        handler=routes.verify_page,
        resource="agentledger://audit/{audit_id}",
    ),
    Operation(
        "GET",
        "/methodology",
        "methodology",
        "The formulas (HTML, or JSON with Accept: application/json or ?format=json)",
        Methodology,
        query=FormatQuery,
        response_alternatives={"text/html": HtmlPage},
        auth="none",
        tags=("decisions",),
        run=routes.run_methodology,
        handler=routes.methodology,
        resource="agentledger://methodology",
        uses_database=False,
    ),
    *(
        Operation(
            "GET",
            path,
            op_id,
            "Decision logging discovery document",
            DecisionLoggingDiscovery,
            auth="none",
            tags=("decisions",),
            response_headers={"Cache-Control": "public, max-age=3600"},
            run=routes.run_well_known,
            alias_of=alias,
            uses_database=False,
        )
        for path, op_id, alias in (
            ("/well-known/decisional-logging.json", "decisionLoggingDiscoveryLegacy", "decisionLoggingDiscovery"),
            ("/.well-known/decisional-logging.json", "decisionLoggingDiscovery", ""),
        )
    ),
]
