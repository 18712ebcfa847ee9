"""One row of the OpenAPI operation table (api.openapi.OPERATIONS).

Its own module so that route modules can declare their rows beside their handlers
(`OPERATIONS: list[Operation]`) and api.openapi can gather them without an import cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

Auth = Literal["required", "optional", "none"]


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    operation_id: str
    summary: str
    response: type[BaseModel]
    status: int = 200
    request: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    auth: Auth = "required"
    #: A value-moving POST that honours Idempotency-Key.
    idempotent: bool = False
    #: Errors particular to this operation (status -> codes); the ones implied by auth, body,
    #: query and idempotency are added by the generator.
    errors: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    description: str = ""
    response_headers: Mapping[str, str] = field(default_factory=dict)
    #: Media type of the success response (e.g. application/octet-stream for stored bytes).
    media_type: str = "application/json"
    #: Descriptions of the {placeholders} in `path` (each is a required string path parameter).
    path_params: Mapping[str, str] = field(default_factory=dict)
    #: Request media types the route takes besides application/json, each with the model of its
    #: fields (e.g. multipart/form-data); any other type is refused with 415 (api.errors.ACCEPTS).
    request_forms: Mapping[str, type[BaseModel]] = field(default_factory=dict)
    #: Patterns of path parameters the route refuses (400) when they do not match.
    path_patterns: Mapping[str, str] = field(default_factory=dict)
    #: Other media types of the success response, each with its model (JSON under an Accept header...).
    response_alternatives: Mapping[str, type[BaseModel]] = field(default_factory=dict)
    #: Other success statuses without a body (e.g. 304), with their descriptions.
    other_statuses: Mapping[int, str] = field(default_factory=dict)
