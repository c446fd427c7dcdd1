"""What every route needs: the caller (D2), a checked JSON body, the app's parts."""

from __future__ import annotations

import functools
import json
import os
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from .. import wire
from ..wire.protocol import AUTH_HEADER, ErrorCode
from .core.configs import Catalog
from .core.heavy_requests import HelperProcess
from .core.pipeline import Pipeline
from .core.records import User
from .core.store import Storage
from .core.vault import Vault
from .errors import ApiError, bad_request
from .settings import Settings

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no", ""}


@dataclass
class Parts:
    """Everything `create_app` builds, kept on ``app.state.parts``."""

    settings: Settings
    store: Storage
    vault: Vault
    catalog: Catalog
    pipeline: Pipeline
    helper: HelperProcess


def parts(request: Request) -> Parts:
    p: Parts = request.app.state.parts
    return p


async def current_user(request: Request) -> User:
    # async, so it runs on the event loop: one indexed read of the WAL database (tens of
    # microseconds, never blocked by writers) is cheaper than a hop to the thread pool,
    # which every request would pay.
    token = request.headers.get(AUTH_HEADER)
    if not token:
        raise ApiError(401, ErrorCode.UNAUTHORIZED,
                       f"The {AUTH_HEADER} header with an API token is missing.")
    user = parts(request).store.user_for_token(token)
    if user is None:
        raise ApiError(401, ErrorCode.UNAUTHORIZED, "The API token is unknown or revoked.")
    return user


#: The caller of a route, from its X-Api token (401 without a valid one).
CurrentUser = Annotated[User, Depends(current_user)]


async def read_body(request: Request, limit: int) -> bytes:
    """The raw body, refused with 413 as soon as it passes ``limit`` bytes."""
    body = await read_or_spool(request, limit, limit + 1)  # never spilled
    assert isinstance(body, bytes)
    return body


async def read_or_spool(request: Request, limit: int, spill: int,
                        directory: Path | None = None) -> bytes | Path:
    """The raw body as `read_body` gives it, or, once it reaches ``spill`` bytes, the path
    of a temporary file in `directory` holding it (the caller removes it).

    A large body is written out chunk by chunk as it arrives: joined in memory and sent
    to another process, tens of MB would be copied a few times over, and each copy holds
    the GIL, so every other request of the service waits for it.
    """
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise _too_large(int(declared), limit)
    chunks: list[bytes] = []
    size, file, path = 0, None, None
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise _too_large(size, limit)
            if file is None and size >= spill:
                if directory is not None:
                    directory.mkdir(parents=True, exist_ok=True)
                descriptor, name = tempfile.mkstemp(prefix="body-", suffix=".json",
                                                    dir=directory)
                file, path = os.fdopen(descriptor, "wb"), Path(name)
                file.writelines(chunks)
                chunks = []
            if file is None:
                chunks.append(chunk)
            else:
                # Into the page cache: microseconds a chunk, less than a hop to a thread.
                file.write(chunk)
    except BaseException:
        if file is not None:
            file.close()
        if path is not None:
            path.unlink(missing_ok=True)
        raise
    if file is None or path is None:
        return b"".join(chunks)
    file.close()
    return path


def _too_large(size: int, limit: int) -> ApiError:
    return ApiError(413, ErrorCode.DOCUMENT_TOO_LARGE,
                    f"The request body is larger than the limit of {limit:,} bytes.",
                    {"size": size, "limit": limit})


async def json_body(request: Request, schema: str, *, check: bool = True) -> dict[str, Any]:
    """The body parsed as JSON and checked against the wire schema ``schema`` (400 if not).

    With ``check=False`` only unknown fields are refused, for routes that first apply
    rules of their own with more precise messages.
    """
    settings = parts(request).settings
    raw = await read_body(request, settings.max_body_bytes)
    # Parsing and checking a body near the size limit takes seconds: off the event loop,
    # so other users' requests are answered meanwhile.
    return await run_in_threadpool(checked_body, raw, schema, settings, check)


def checked_body(raw: bytes, schema: str, settings: Settings, check: bool = True
                 ) -> dict[str, Any]:
    """`json_body`'s work on a body already read: parsed, then checked (400 if not)."""
    body = _parse(raw, settings.max_json_depth, settings.max_json_containers)
    if not isinstance(body, dict):
        raise bad_request("The request body must be a JSON object.")
    unknown = _unknown_fields(body, schema)
    if unknown:
        raise bad_request(f"Unknown field(s) in the request body: {', '.join(unknown)}.",
                          fields=unknown)
    problems = wire.errors(body, schema) if check else []
    if problems:
        raise bad_request(f"Invalid request body: {problems[0]}", problems=problems)
    result: dict[str, Any] = body
    return result


def _parse(raw: bytes, max_depth: int, max_containers: int) -> Any:
    """JSON text in UTF-8 (D1), nested at most ``max_depth`` levels, with at most
    ``max_containers`` arrays and objects, every string valid Unicode; anything else is a
    400 ``invalid_json`` before any work is done."""
    # Twelve million empty arrays fit in a body at the size limit, and parsing, walking
    # and checking them took 17 s and 1.7 GiB. Brackets are counted before parsing (in
    # C, 20 ms for the largest body); one inside a string counts too, which no real
    # request comes near.
    containers = raw.count(b"[") + raw.count(b"{")
    if containers > max_containers:
        raise bad_request(
            f"The request body holds {containers:,} arrays and objects (counted as '[' and "
            f"'{{' characters); the limit is {max_containers:,}.", ErrorCode.INVALID_JSON)
    try:
        # UTF-8 only: json.loads would take UTF-16 and UTF-32 bytes too.
        body = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise bad_request(f"The request body is not UTF-8: {exc}.",
                          ErrorCode.INVALID_JSON) from exc
    except json.JSONDecodeError as exc:
        raise bad_request(f"The request body is not valid JSON: {exc}.",
                          ErrorCode.INVALID_JSON) from exc
    except RecursionError as exc:
        # The parser gives up near a thousand levels; shallower bodies are measured below.
        raise bad_request(_too_deep(max_depth), ErrorCode.INVALID_JSON) from exc
    problem = _structure_problem(body, max_depth)
    if problem:
        raise bad_request(problem, ErrorCode.INVALID_JSON)
    return body


def _too_deep(max_depth: int) -> str:
    return f"The request body nests arrays and objects more than {max_depth} levels deep."


def _structure_problem(body: Any, max_depth: int) -> str | None:
    """What makes a parsed body unusable though it is JSON: nesting deeper than
    ``max_depth``, or a string with a lone UTF-16 surrogate ("\\ud800"), which no
    UTF-8 text can hold (SQLite and the answer's encoder would fail on it). Walked with
    a stack, not recursion, so no depth can make the walk itself fail."""
    stack: list[tuple[Any, int]] = [(body, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            if depth > max_depth:
                return _too_deep(max_depth)
            for key, item in value.items():
                if not valid_unicode(key):
                    return f"The request body has a key that is not valid Unicode: {key!r}."
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            if depth > max_depth:
                return _too_deep(max_depth)
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, str) and not valid_unicode(value):
            return (f"The request body has a string that is not valid Unicode (a lone "
                    f"surrogate): {value[:40]!r}.")
    return None


def valid_unicode(text: str) -> bool:
    """Whether the text can be written as UTF-8 (no lone UTF-16 surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _unknown_fields(body: dict[str, Any], schema: str) -> list[str]:
    known = _known_fields(schema)
    return sorted(k for k in body if k not in known)


@functools.cache
def _known_fields(schema: str) -> frozenset[str]:
    # Once per schema: `wire.schema` deep-copies the whole document (about 45 us for
    # the trigger request's, measured), which every request with a body paid.
    return frozenset(wire.schema(schema).get("properties", {}))


def json_response(content: Any, status_code: int = 200) -> Response:
    """A JSON answer of plain JSON data, serialised once.

    Returning the dict instead would send it through FastAPI's ``jsonable_encoder``
    first, which walks every value and takes about 1 ms for one invoice's extracted
    data, eight times ``json.dumps`` (measured); our answers are JSON data already.
    """
    return JSONResponse(content, status_code=status_code)


def raw_json_response(text: str | bytes) -> Response:
    """A JSON answer from JSON text stored as it is (a result fetch sends it unparsed)."""
    return Response(text, media_type="application/json")


def file_json_response(path: Path, chunk: int = 1 << 20) -> Response:
    """A JSON answer written to a file by another process, sent a chunk at a time and
    removed (it is unlinked at once: the open file is read until the answer is sent)."""
    file = path.open("rb")
    size = os.fstat(file.fileno()).st_size
    path.unlink(missing_ok=True)

    async def chunks() -> AsyncIterator[bytes]:
        try:
            while data := await run_in_threadpool(file.read, chunk):
                yield data
        finally:
            file.close()

    return StreamingResponse(chunks(), media_type="application/json",
                             headers={"content-length": str(size)})


def show_schema_output(request: Request) -> bool:
    raw = request.query_params.get("show_schema_output")
    if raw is None or raw.lower() in _FALSE:
        return False
    if raw.lower() in _TRUE:
        return True
    raise bad_request(f"show_schema_output must be True or False, not {raw!r}.")
