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
from api.verification.operations import OPERATIONS

__all__ = ["FEATURE"]

#: Public verification: pages and JSON for anyone checking an entry against the anchored log.
FEATURE = Feature("verification", tuple(OPERATIONS))
