"""The service's one error type, rendered as the D3 body by the app's handlers."""

from __future__ import annotations

from typing import Any

from ..wire.protocol import ErrorCode


class ApiError(Exception):
    """An error answered as ``{"error": {"code", "message", "details"}}`` with ``status``."""

    def __init__(
        self, status: int, code: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}

    def __reduce__(self) -> tuple[Any, ...]:
        # Raised in a helper process and sent back by pickle (core/heavy_requests.py), which
        # would call the class with the message alone.
        return type(self), (self.status, self.code, self.message, self.details)

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


def bad_request(message: str, code: str = ErrorCode.INVALID_REQUEST, **details: Any
                ) -> ApiError:
    return ApiError(400, code, message, details)


def not_found(kind: str, id_: str) -> ApiError:
    # D2: the same body for unknown and foreign ids, so nothing reveals existence.
    return ApiError(404, ErrorCode.NOT_FOUND, f"No {kind} with id {id_!r} was found.", {"id": id_})
