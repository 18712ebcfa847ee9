"""Public verification (no credentials): /verify/{audit_id}, /methodology and the discovery document.

- GET /verify/{audit_id}: HTML for people, JSON for `Accept: application/json` (or ?format=json):
  the entry, the chain inputs, shell commands that recompute the payload, chain and leaf hashes
  with printf and sha256sum, the inclusion proof against the latest anchored checkpoint holding
  the entry (or the current tree, marked unanchored) and the anchor transaction.
- GET /methodology: every formula (HTML; JSON under Accept: application/json).
- GET /well-known/decisional-logging.json and /.well-known/decisional-logging.json: the decision
  logging service's description (Cache-Control: public, max-age=3600).
"""

from __future__ import annotations

from api.feature import Feature
from api.operation import Operation
from api.verification import routes

__all__ = ["FEATURE"]

#: The verification rows of the operation table (/api/schema, MCP tools and resources).
OPERATIONS: list[Operation] = [
    Operation(
        "GET",
        "/verify/{audit_id}",
        "verifyEntry",
        "Verify an audit entry (HTML, or JSON with Accept: application/json or ?format=json)",
        routes.Verification,
        query=routes.FormatQuery,
        response_alternatives={"text/html": routes.HtmlPage},
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
        routes.Methodology,
        query=routes.FormatQuery,
        response_alternatives={"text/html": routes.HtmlPage},
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
            routes.DecisionLoggingDiscovery,
            auth="none",
            tags=("decisions",),
            response_headers={"Cache-Control": "public, max-age=3600"},
            run=routes.run_well_known,
            toolset="meta",
            alias_of=alias,
            uses_database=False,
        )
        for path, op_id, alias in (
            ("/well-known/decisional-logging.json", "decisionLoggingDiscoveryLegacy", "decisionLoggingDiscovery"),
            ("/.well-known/decisional-logging.json", "decisionLoggingDiscovery", ""),
        )
    ),
]

#: Public verification: pages and JSON for anyone checking an entry against the anchored log.
FEATURE = Feature("verification", tuple(OPERATIONS), toolset="decisions")
