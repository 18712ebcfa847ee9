"""Print the OpenAPI document /api/schema serves on a full app (every operation of the table), without
starting one: what the TypeScript SDK's types are generated from (`make sdk-types`)."""

from __future__ import annotations

import json
import sys

from api.openapi import document
from api.operation_table import OPERATIONS


def main() -> None:
    json.dump(document(OPERATIONS), sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
