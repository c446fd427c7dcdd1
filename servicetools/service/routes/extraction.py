"""Section 4.1-4.6: triggers, result queries, statuses and updates."""

from __future__ import annotations

import asyncio
import base64
import binascii
import difflib
import json
import os
import tempfile
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ... import wire
from ...wire.protocol import ErrorCode, StatusType
from ..core import outputschema
from ..core.documents import inspect_document
from ..core.heavy_requests import helper_parts
from ..core.hosted import DownloadError, check_url
from ..core.pipeline import Job, PipelineFailure
from ..core.records import User, new_id
from ..core.results import apply_updates
from ..core.store import Storage
from ..deps import (
    CurrentUser,
    Parts,
    checked_body,
    file_json_response,
    json_response,
    parts,
    raw_json_response,
    read_body,
    read_or_spool,
    show_schema_output,
)
from ..errors import ApiError, bad_request, not_found
from ..settings import Settings
from ._docs import documented

router = APIRouter(prefix="/extraction", tags=["extraction"])

_DOCUMENT_FIELD = {"raw": "document_raw_data", "hosted": "document_host_url",
                   "service": "document_storage_id"}
# Compare-and-set rounds of one update before it gives way to the others (409).
_UPDATE_ATTEMPTS = 5
# An update body this large is checked and applied in the helper process: that work is
# seconds of pure Python for the largest, which in the service process would hold up
# every other request (core/heavy_requests.py). Smaller ones cost less than the trip there.
_HELPER_BYTES = 1 << 20
_EXTENSIONS = {"application/pdf": ".pdf", "image/png": ".png", "image/jpeg": ".jpg"}


def _check_trigger(body: dict[str, Any]) -> None:
    """D4, with a message naming the offending field (JSON Schema's oneOf would not)."""
    has_name, has_id = "configuration_name" in body, "configuration_id" in body
    if has_name and has_id:
        raise bad_request("Give configuration_name or configuration_id, not both.",
                          fields=["configuration_name", "configuration_id"])
    if not (has_name or has_id):
        raise bad_request("configuration_name or configuration_id is required.",
                          fields=["configuration_name", "configuration_id"])
    input_type = body.get("input_type")
    if input_type is None:
        raise bad_request("input_type is required (raw, hosted or service).",
                          fields=["input_type"])
    if not isinstance(input_type, str) or input_type not in _DOCUMENT_FIELD:
        raise bad_request(f"input_type must be raw, hosted or service, not {input_type!r}.",
                          fields=["input_type"])
    wanted = _DOCUMENT_FIELD[input_type]
    others = sorted(f for f in _DOCUMENT_FIELD.values() if f in body and f != wanted)
    if others:
        raise bad_request(f"{', '.join(others)} must not be given when input_type is "
                          f"{input_type!r}; give only {wanted}.", fields=others)
    if wanted not in body:
        raise bad_request(f"input_type is {input_type!r}, so {wanted} is required.",
                          fields=[wanted])


def _decode(raw: str) -> bytes:
    # Line breaks are common in base64 produced by mail-era tools; anything else is an error.
    compact = "".join(raw.split())
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise bad_request(f"document_raw_data is not valid base64: {exc}.",
                          ErrorCode.INVALID_BASE64) from exc


def _unknown(kind: str, key: str, value: str, known: list[str]) -> ApiError:
    """404 for a configuration or classifier the service does not have, naming those it
    has (they are the service's, the same for every user) and the closest ones."""
    close = difflib.get_close_matches(value, known, n=3, cutoff=0.6)
    hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
    label = "named" if key == "name" else "with id"
    return ApiError(404, ErrorCode.NOT_FOUND,
                    f"No {kind} {label} {value!r} was found.{hint} Known: "
                    f"{', '.join(sorted(known)) or 'none'}.",
                    {key: value, "known": sorted(known), "close_matches": close})


def _prepare(p: Parts, user: User, body: dict[str, Any], trigger_type: str) -> Job:
    """Check a trigger request against everything known before the pipeline runs."""
    if "configuration_id" in body:
        config = p.catalog.configuration(id_=body["configuration_id"])
        if config is None:
            raise _unknown("configuration", "id", body["configuration_id"],
                           list(p.catalog.configurations))
    else:
        config = p.catalog.configuration(name=body["configuration_name"])
        if config is None:
            raise _unknown("configuration", "name", body["configuration_name"],
                           [c["name"] for c in p.catalog.configurations.values()])
    classifier = None
    if "classifier_id" in body:
        classifier = p.catalog.classifiers.get(body["classifier_id"])
        if classifier is None:
            raise _unknown("classifier", "id", body["classifier_id"],
                           list(p.catalog.classifiers))
    # save_extraction is meaningful only for synchronous runs: async ones are always saved.
    save = trigger_type == "async" or body.get("save_extraction", True)
    extraction_id = new_id()
    name = body.get("extraction_name", "")
    declared = body.get("content_type")
    job = Job(extraction_id=extraction_id, owner_id=user.id, info={}, configuration=config,
              classifier=classifier, save=save, content_type=declared)
    input_type = body["input_type"]
    if input_type == "raw":
        data = _decode(body["document_raw_data"])
        doc = inspect_document(data, p.settings, declared)
        job.data, job.content_type = data, doc.content_type
        if save:
            ext = _EXTENSIONS[doc.content_type]
            file_name = name if name.lower().endswith(ext) else f"{name or extraction_id}{ext}"
            record = p.vault.add(user.id, data, file_name, "extraction",
                                 content_type=doc.content_type, num_pages=doc.num_pages)
            job.document_storage_id = record["document_id"]
    elif input_type == "service":
        stored = p.store.document(user.id, body["document_storage_id"])
        if stored is None:
            raise not_found("document", body["document_storage_id"])
        if declared is not None and declared != stored["content_type"]:
            raise ApiError(400, ErrorCode.CONTENT_TYPE_MISMATCH,
                           f"content_type is {declared!r} but the vault document is "
                           f"{stored['content_type']!r}.",
                           {"declared": declared, "detected": stored["content_type"]})
        job.document_storage_id = stored["document_id"]
    else:
        try:
            check_url(body["document_host_url"])
        except DownloadError as exc:
            raise bad_request(f"document_host_url: {exc}.", fields=["document_host_url"]) from exc
        job.host_url = body["document_host_url"]
    job.info = {
        "id": new_id(),
        "api_key_hash": user.key_hash,
        "extraction_id": extraction_id,
        "extraction_name": name,
        "trigger_user_id": user.id,
        "trigger_unix_timestamp": time.time(),
        "trigger_type": trigger_type,
        "input_type": input_type,
        "extracted_data_saved": bool(save),
        "used_extraction_configuration_id": config["id"],
        "used_extraction_configuration_name": config["name"],
        "preview": False,
    }
    p.pipeline.accept(job,
                      delete_after_first_fetch=body.get("delete_after_first_fetch", False))
    return job


def _accepted(p: Parts, user: User, raw: bytes, trigger_type: str) -> Job:
    """A trigger body parsed, checked (D4, then the schema) and accepted (`_prepare`).

    All of it in one trip to the thread pool: each trip costs the service process a
    thread wake-up, and a batch's triggers arrive by the hundred while the engine
    workers hold every core."""
    body = checked_body(raw, "trigger_request", p.settings, check=False)
    _check_trigger(body)
    problems = wire.errors(body, "trigger_request")
    if problems:
        raise bad_request(f"Invalid request body: {problems[0]}", problems=problems)
    return _prepare(p, user, body, trigger_type)


async def _accept(request: Request, user: User, trigger_type: str) -> tuple[Parts, Job]:
    p = parts(request)
    raw = await read_body(request, p.settings.max_body_bytes)
    return p, await run_in_threadpool(_accepted, p, user, raw, trigger_type)


@lru_cache(maxsize=64)
def _compiled(schema_json: str, config_json: str) -> Any:
    return outputschema.compile_output_schema(json.loads(schema_json), json.loads(config_json))


def _present(data: dict[str, Any], schema_output: bool) -> Response:
    """The extracted data, or the three-part response of 4.1 when asked for."""
    if not schema_output:
        return json_response(data)
    config = data.get("used_extraction_configuration", {})
    schema = config.get("output_schema")
    if not schema:
        return json_response({"extracted_data": data, "schema_output": {}, "validation": {}})
    compiled = _compiled(json.dumps(schema, sort_keys=True), json.dumps(config, sort_keys=True))
    rendered, validation = outputschema.render(compiled, data)
    return json_response({"extracted_data": data, "schema_output": rendered,
                          "validation": validation})


@router.post("/trigger_sync", **documented(
    "extracted_data", "trigger_request", response_alternatives=("schema_output_response",),
    errors=(400, 404, 413, 415, 422, 503)))
async def trigger_sync(request: Request, user: CurrentUser) -> Any:
    schema_output = show_schema_output(request)
    p, job = await _accept(request, user, "sync")
    try:
        data = await asyncio.wrap_future(p.pipeline.submit(job))
    except PipelineFailure as exc:
        status = p.store.latest_statuses(user.id, [job.extraction_id]).get(job.extraction_id)
        raise ApiError(422, ErrorCode.EXTRACTION_FAILED, f"The extraction failed: {exc}",
                       {"status": status, "extraction_id": job.extraction_id}) from exc
    return _present(data, schema_output)


@router.post("/trigger_async", **documented(
    "extraction_info", "trigger_request", errors=(400, 404, 413, 415, 503)))
async def trigger_async(request: Request, user: CurrentUser) -> Any:
    p, job = await _accept(request, user, "async")
    p.pipeline.submit(job)
    return json_response(job.info)


def _readable(store: Storage, owner_id: str, extraction_id: str) -> None:
    """Raise the D6 answer unless the extraction's data can be read now."""
    row = store.extraction(owner_id, extraction_id)
    if row is None:
        raise not_found("extraction", extraction_id)
    if not row["saved"]:
        raise ApiError(404, ErrorCode.EXTRACTION_NOT_SAVED,
                       f"Extraction {extraction_id!r} was run with save_extraction false; "
                       "its data was not stored.", {"id": extraction_id})
    status = store.latest_statuses(owner_id, [extraction_id])[extraction_id]
    if status["status_type"] == StatusType.ERROR:
        raise ApiError(409, ErrorCode.EXTRACTION_FAILED,
                       f"Extraction {extraction_id!r} failed: {status['message']}",
                       {"status": status})
    if status["status_type"] != StatusType.ENDED:
        raise ApiError(409, ErrorCode.EXTRACTION_RUNNING,
                       f"Extraction {extraction_id!r} is still running "
                       f"({status['status_type']}).", {"status": status})
    if row["data_state"] == "deleted":
        raise _deleted(extraction_id)


def _deleted(extraction_id: str) -> ApiError:
    return ApiError(410, ErrorCode.EXTRACTION_DATA_DELETED,
                    f"The data of extraction {extraction_id!r} was deleted after its first "
                    "fetch.", {"id": extraction_id})


def _fetch(p: Parts, user: User, extraction_id: str) -> str:
    """The stored extracted data as JSON text, after the D6 checks."""
    _readable(p.store, user.id, extraction_id)
    state, data = p.store.take_data(user.id, extraction_id)
    if data is None:
        # Lost the race for a delete_after_first_fetch result to a concurrent fetch.
        raise _deleted(extraction_id)
    return data


@router.get("/result/get/{extraction_id}", **documented(
    "extracted_data", response_alternatives=("schema_output_response",),
    errors=(400, 404, 409, 410)))
def get_result(extraction_id: str, request: Request, user: CurrentUser) -> Any:
    schema_output = show_schema_output(request)
    data = _fetch(parts(request), user, extraction_id)
    # The stored text is the answer: parsing and re-encoding it would only cost time.
    return _present(json.loads(data), True) if schema_output else raw_json_response(data)


@router.get("/result/list/{extraction_id}", **documented(
    "targets_list", errors=(404, 409, 410)))
def list_targets(extraction_id: str, request: Request, user: CurrentUser
                 ) -> Any:
    data = json.loads(_fetch(parts(request), user, extraction_id))
    return json_response({"extracted_targets": data["extracted_targets"]})


@router.post("/status/list", **documented(
    "status_list_response", "status_list_request", errors=(400, 404, 413)))
async def list_statuses(request: Request, user: CurrentUser) -> Any:
    p = parts(request)
    raw = await read_body(request, p.settings.max_body_bytes)
    # One trip to the thread pool for the whole request (see `_accepted`): a batch's
    # wait asks again every few tens of milliseconds near its end.
    return json_response(await run_in_threadpool(_statuses, p, user, raw))


def _statuses(p: Parts, user: User, raw: bytes) -> dict[str, Any]:
    body = checked_body(raw, "status_list_request", p.settings, check=False)
    ids = body.get("extraction_id_list")
    if isinstance(ids, list) and len(ids) > wire.MAX_STATUS_IDS:
        raise bad_request(f"extraction_id_list holds {len(ids)} ids; at most "
                          f"{wire.MAX_STATUS_IDS} are allowed per request.",
                          ErrorCode.TOO_MANY_IDS, count=len(ids), limit=wire.MAX_STATUS_IDS)
    problems = wire.errors(body, "status_list_request")
    if problems:
        raise bad_request(f"Invalid request body: {problems[0]}", problems=problems)
    wanted = list(dict.fromkeys(body["extraction_id_list"]))
    found = p.store.latest_statuses(user.id, wanted)
    unknown = [i for i in wanted if i not in found]
    if unknown:
        raise ApiError(404, ErrorCode.NOT_FOUND, f"{len(unknown)} extraction id(s) were not found: "
                       + ", ".join(unknown[:5]) + ("..." if len(unknown) > 5 else ""),
                       {"unknown_ids": unknown})
    return {"status_map": {i: found[i] for i in wanted}, "query_unix_timestamp": time.time()}


@router.post("/result/update", **documented(
    "extracted_data", "update_request", response_alternatives=("schema_output_response",),
    errors=(400, 404, 409, 410, 413)))
async def update_results(request: Request, user: CurrentUser) -> Any:
    schema_output = show_schema_output(request)
    p = parts(request)
    body = await read_or_spool(request, p.settings.max_body_bytes, _HELPER_BYTES,
                               p.settings.spool_dir)
    if isinstance(body, bytes):
        answer = await run_in_threadpool(_update, p.store, p.settings, user.id, body,
                                         schema_output)
        return raw_json_response(answer)
    try:
        written = await p.helper.run(_update_in_helper, user.id, str(body), schema_output)
    finally:
        body.unlink(missing_ok=True)
    return file_json_response(Path(written))


def _update_in_helper(owner_id: str, body: str, schema_output: bool) -> str:
    """In the helper process: the update whose body is in the file `body`; the path of a
    file holding the answer."""
    settings, store = helper_parts()
    answer = _update(store, settings, owner_id, Path(body).read_bytes(), schema_output)
    settings.spool_dir.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(prefix="answer-", suffix=".json",
                                        dir=settings.spool_dir)
    with os.fdopen(descriptor, "wb") as file:
        file.write(answer)
    return name


def _update(store: Storage, settings: Settings, owner_id: str, raw: bytes,
            schema_output: bool) -> bytes:
    """Check an update request, apply it to the stored data, store it; the answer's JSON."""
    body = checked_body(raw, "update_request", settings, check=False)
    # Counted before the values are checked: checking costs per value.
    count = _update_values(body)
    if count > settings.max_update_values:
        raise bad_request(f"The update holds {count:,} values; at most "
                          f"{settings.max_update_values:,} are allowed per request.",
                          count=count, limit=settings.max_update_values)
    problems = wire.errors(body, "update_request")
    if problems:
        raise bad_request(f"Invalid request body: {problems[0]}", problems=problems)
    extraction_id = body["extraction_id"]
    _readable(store, owner_id, extraction_id)
    # The values are checked and the new data written out without the write lock; it is
    # taken only to store them, if nobody changed the data in between.
    for _ in range(_UPDATE_ATTEMPTS):
        stored = store.snapshot(owner_id, extraction_id)
        if stored is None or stored[0] != "present" or stored[1] is None:
            raise _deleted(extraction_id)
        data = json.loads(stored[1])
        apply_updates(data, body["updates"])
        if store.replace_data(owner_id, extraction_id, stored[1], json.dumps(data)):
            return bytes(_present(data, schema_output).body)
    raise ApiError(409, ErrorCode.UPDATE_CONFLICT,
                   f"Extraction {extraction_id!r} was changed by {_UPDATE_ATTEMPTS} other "
                   "updates while this one was checked; send it again.")


def _update_values(body: dict[str, Any]) -> int:
    """How many values an update request carries (0 where its shape is wrong: the schema
    check says what is)."""
    updates = body.get("updates")
    if not isinstance(updates, list):
        return 0
    return sum(len(u["new_extracted_values"]) for u in updates
               if isinstance(u, dict) and isinstance(u.get("new_extracted_values"), list))
