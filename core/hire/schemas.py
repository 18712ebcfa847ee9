"""The JSON Schemas a service publishes for its input and output, and checking values against them.

jsonschema-rs (draft detected from `$schema`, 2020-12 by default), configured for untrusted schemas:
`offline` (a `$ref` to a remote URL is never fetched: no request leaves the service on a
provider's say-so) and fancy-regex with a backtracking limit (a pattern cannot stall the event
loop). Compiled validators are cached by the schema's text.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import jsonschema_rs

from core.errors import ServiceError
from core.hire.rules import MAX_SCHEMA_BYTES

_REGEX = jsonschema_rs.FancyRegexOptions(backtrack_limit=100_000, size_limit=1_000_000, dfa_size_limit=1_000_000)


class SchemaMismatch(ValueError):
    """A value that its schema refuses; `path` is a JSON pointer into the value."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


@functools.lru_cache(maxsize=2048)
def _validator(schema_text: str) -> Any:
    return jsonschema_rs.validator_for(json.loads(schema_text), offline=True, pattern_options=_REGEX)


def compile_schema(schema: Any, param: str) -> str:
    """The compact JSON text of a valid JSON Schema (an object or a boolean); 400 otherwise."""
    if not isinstance(schema, (dict, bool)):
        raise ServiceError(422, "invalid_schema", f"{param} must be a JSON Schema (an object)", param=param)
    text = json.dumps(schema, separators=(",", ":"), sort_keys=True, default=str)
    if len(text.encode()) > MAX_SCHEMA_BYTES:
        raise ServiceError(413, "schema_too_large", f"{param} is larger than {MAX_SCHEMA_BYTES} bytes", param=param)
    try:
        valid = jsonschema_rs.meta.is_valid(json.loads(text))
        if valid:
            _validator(text)
    except (ValueError, jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError) as exc:
        raise ServiceError(422, "invalid_schema", f"{param} is not a usable JSON Schema: {exc}", param=param) from exc
    if not valid:
        raise ServiceError(422, "invalid_schema", f"{param} is not a valid JSON Schema", param=param)
    return text


def check(schema_text: str, value: Any) -> None:
    """SchemaMismatch (the first error) when `value` does not satisfy the schema."""
    validator = _validator(schema_text)
    try:
        error = next(iter(validator.iter_errors(value)), None)
    except ValueError as exc:  # a pattern past its backtracking limit, a value the engine refuses
        raise SchemaMismatch(str(exc), "") from exc
    if error is not None:
        path = "".join(f"/{p}" for p in error.instance_path)
        raise SchemaMismatch(str(error.message), path)


def load(schema_text: str) -> Any:
    return json.loads(schema_text)
