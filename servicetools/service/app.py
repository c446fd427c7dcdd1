"""`create_app(settings)`: the whole service, built from one settings object.

Nothing connects at import time; a test builds an app on a temporary folder.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import wire
from ..wire.protocol import API_PREFIX, AUTH_HEADER, ErrorCode
from .core.backends import open_backend
from .core.configs import Catalog
from .core.heavy_requests import HelperProcess
from .core.store import StoreUnavailable
from .core.vault import Vault
from .core.vault_objects import StorageError
from .deps import Parts
from .errors import ApiError
from .routes import extraction, vault
from .settings import Settings

log = logging.getLogger("servicetools.service")
_HTTP_CODES = {404: ErrorCode.NOT_FOUND, 405: ErrorCode.METHOD_NOT_ALLOWED,
               413: ErrorCode.DOCUMENT_TOO_LARGE}


def build_parts(settings: Settings) -> Parts:
    """Storage, vault, catalog and pipeline; raises `ConfigError` for a bad configurations
    folder, `StoreUnavailable` for a database and `StorageError` for a vault that cannot
    be used."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    catalog = Catalog.load(settings.configurations_dir, settings.classifiers_dir)
    backend = open_backend(settings)
    try:
        vault = Vault(settings, backend.store)
        # Now, not at the first upload: a misnamed bucket or a wrong key stops the start.
        vault.objects.check()
        if settings.dev_token:
            backend.store.add_key(settings.dev_user, settings.dev_token)
    except BaseException:
        backend.close()
        raise
    return Parts(settings=settings, store=backend.store, vault=vault, catalog=catalog,
                 pipeline=backend.pipeline, helper=HelperProcess(settings))


def create_app(settings: Settings) -> FastAPI:
    parts = build_parts(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        recovered = parts.pipeline.recover()
        if recovered:
            log.warning("%d extraction(s) interrupted by the last stop were set to error",
                        recovered)
        # Bodies and answers of large updates a crash left on their way.
        shutil.rmtree(settings.spool_dir, ignore_errors=True)
        settings.spool_dir.mkdir(parents=True)
        dropped = parts.store.drop_unreadable()
        if dropped:
            log.warning("%d result(s) left unreadable by the last stop were removed", dropped)
        parts.pipeline.warm_up()
        parts.pipeline.start_watchdog()
        yield
        parts.pipeline.shutdown()
        parts.helper.shutdown()

    app = FastAPI(title="Document Data Extraction Service (servicetools local reference)",
                  version="1", lifespan=lifespan, docs_url="/docs")
    app.state.parts = parts
    api = APIRouter(prefix=API_PREFIX)
    api.include_router(extraction.router)
    api.include_router(vault.router)
    app.include_router(api)
    _add_error_handlers(app)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _error(status: int, code: str, message: str, details: dict[str, Any] | None = None,
           headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(ApiError(status, code, message, details).body(), status_code=status,
                        headers=headers)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, exc.code, exc.message, exc.details)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, ErrorCode.INVALID_REQUEST)
        message = str(exc.detail)
        if exc.status_code == 404:
            message = f"There is no endpoint at {request.url.path}."
        elif exc.status_code == 405:
            allowed = (exc.headers or {}).get("Allow", "")
            message = f"{request.method} is not allowed on {request.url.path}" + (
                f"; it answers {allowed}." if allowed else ".")
        # Starlette's 405 carries the Allow header (RFC 9110 requires it): keep it.
        return _error(exc.status_code, code, message, headers=dict(exc.headers or {}))

    async def storage_away(request: Request, exc: Exception) -> JSONResponse:
        # Not the caller's fault and not a bug: the bucket (or disk), or the PostgreSQL
        # server, is away or restarting. A 503 tells clients to retry; the reason goes to
        # the log, not to the caller.
        what = ("The service's database" if isinstance(exc, StoreUnavailable)
                else "The document storage")
        log.error("%s failed on %s %s: %s", what, request.method, request.url.path, exc)
        return _error(503, ErrorCode.STORAGE_UNAVAILABLE,
                      f"{what} cannot be reached right now (an upload or trigger stores "
                      "nothing then); please retry later.", headers={"Retry-After": "5"})

    app.add_exception_handler(StorageError, storage_away)
    app.add_exception_handler(StoreUnavailable, storage_away)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, ErrorCode.INVALID_REQUEST, "The request is malformed.",
                      {"problems": [str(e.get("msg")) for e in exc.errors()]})

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        # A 500 is a bug (D3); still answer in the documented shape, and log it.
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return _error(500, ErrorCode.INTERNAL_ERROR,
                      "The service failed unexpectedly; this is a bug.")


def _openapi(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema is None:
        doc = get_openapi(title=app.title, version=app.version, routes=app.routes)
        schemas = doc.setdefault("components", {}).setdefault("schemas", {})
        # FastAPI documents a 422 for path parameters on its own; our handler answers
        # such errors with a D3 400, so that entry would be false.
        for ops in doc.get("paths", {}).values():
            for op in ops.values():
                resp = op.get("responses", {}).get("422", {})
                if "HTTPValidationError" in str(resp):
                    del op["responses"]["422"]
        for generated in ("HTTPValidationError", "ValidationError"):
            schemas.pop(generated, None)
        for name in wire.SCHEMA_NAMES:
            schemas[name] = wire.bundled(name, ref_root=f"#/components/schemas/{name}")
        doc["components"]["securitySchemes"] = {
            "ApiToken": {"type": "apiKey", "in": "header", "name": AUTH_HEADER}}
        doc["security"] = [{"ApiToken": []}]
        app.openapi_schema = doc
    return app.openapi_schema
