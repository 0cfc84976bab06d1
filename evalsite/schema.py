"""The OpenAPI schema's error answers, added to every operation by a drf-spectacular hook.

Each view documents its successes; the errors are the same few everywhere, so they are added
here rather than repeated on every view: 401 and 403 on every operation (all need a signed-in
caller, most a role), 404 where the path names an object, 400 where the request carries a body
or query parameters, and 503 while the database is unreachable. Every error is JSON under
``/api/``, with a readable ``detail`` (``ErrorDetail``), except field validation errors, which
name the fields (``FieldErrors``). A view adds its own statuses (409 for an answer that is no
longer current, say) with ``extend_schema``; they are left as the view describes them.
"""

from __future__ import annotations

from typing import Any

ERROR = {
    "type": "object",
    "description": "An error: `detail` says what went wrong and what to do.",
    "properties": {
        "detail": {"type": "string"},
        "code": {
            "type": "string",
            "description": "A stable name of the error, on the errors of annotation and "
            "of an unreachable database (`stale`, `not_current`, `service_unavailable`…).",
        },
        "errors": {
            "description": "Every reason, where there are several (`detail` gives the first)."
        },
        "problems": {
            "type": "array",
            "items": {"type": "object"},
            "description": "A refused upload's problems, each with its file, line and message.",
        },
    },
    "required": ["detail"],
}
FIELD_ERRORS = {
    "type": "object",
    "description": "Field validation errors: each field of the request with its messages "
    "(`non_field_errors` for the request as a whole).",
    "additionalProperties": {},
}

ERROR_REF = {"$ref": "#/components/schemas/ErrorDetail"}
FIELD_ERRORS_REF = {"$ref": "#/components/schemas/FieldErrors"}

# Status: (description, schema), in the order they are listed.
ERRORS: dict[str, tuple[str, dict[str, Any]]] = {
    "400": (
        "The request is malformed, or a field's value is refused.",
        {"anyOf": [ERROR_REF, FIELD_ERRORS_REF]},
    ),
    "401": (
        "No credentials, or an unknown token (`Authorization: Token …`).",
        ERROR_REF,
    ),
    "403": (
        "The caller may not do this (not the campaign's organizer or annotator), or a signed-in "
        "browser session sent no CSRF token.",
        ERROR_REF,
    ),
    "404": (
        "Nothing of that id, or nothing the caller may see.",
        ERROR_REF,
    ),
    "503": (
        "The database is unreachable right now; try again after `Retry-After` seconds.",
        ERROR_REF,
    ),
}

METHODS = {"get", "put", "patch", "post", "delete"}


def _applies(status: str, path: str, operation: dict[str, Any]) -> bool:
    if status == "404":
        return "{" in path
    if status == "400":
        query = any(p.get("in") == "query" for p in operation.get("parameters", []))
        return query or "requestBody" in operation
    return True


def error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> Any:
    """drf-spectacular postprocessing hook: the error answers of every operation."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["ErrorDetail"] = ERROR
    schemas["FieldErrors"] = FIELD_ERRORS
    for path, item in result.get("paths", {}).items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            responses = operation.setdefault("responses", {})
            for status, response in responses.items():
                # A status a view describes only in words (``OpenApiResponse(description=…)``).
                if int(status) >= 400 and "content" not in response:
                    response["content"] = {"application/json": {"schema": ERROR_REF}}
            for status, (description, schema) in ERRORS.items():
                if status in responses or not _applies(status, path, operation):
                    continue
                responses[status] = {
                    "description": description,
                    "content": {"application/json": {"schema": schema}},
                }
            operation["responses"] = dict(sorted(responses.items()))
    return result
