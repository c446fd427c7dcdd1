"""OpenAPI documentation for routes, pointing at the wire schemas (one vocabulary)."""

from __future__ import annotations

from typing import Any

_ERRORS = {
    400: "The request breaks a rule of the interface (D3, D4, D8).",
    401: "No or unknown API token.",
    404: "Unknown (or another user's) id.",
    409: "The extraction is still running or has failed.",
    410: "The data was deleted after its first fetch.",
    413: "The document, or the request body, is over the size or page limit.",
    415: "The document is not a PDF, PNG or JPEG.",
    422: "The synchronous extraction failed in the pipeline.",
    503: "The vault's storage cannot be reached right now; retry later.",
}


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def documented(response: str | None, request: str | None = None, *, errors: tuple[int, ...],
               response_alternatives: tuple[str, ...] = ()) -> dict[str, Any]:
    """Keyword arguments for a route decorator: request body, response and error schemas."""
    responses: dict[int | str, dict[str, Any]] = {}
    if response is not None:
        schema = ref(response)
        if response_alternatives:
            schema = {"oneOf": [ref(response), *(ref(a) for a in response_alternatives)]}
        responses[200] = {"description": "Success",
                          "content": {"application/json": {"schema": schema}}}
    for status in (401, *errors):
        responses[status] = {"description": _ERRORS[status],
                             "content": {"application/json": {"schema": ref("error")}}}
    kwargs: dict[str, Any] = {"responses": responses}
    if request is not None:
        kwargs["openapi_extra"] = {"requestBody": {
            "required": True, "content": {"application/json": {"schema": ref(request)}}}}
    return kwargs
