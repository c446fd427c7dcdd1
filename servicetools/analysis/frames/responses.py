"""`statuses` and `vault`: status list responses (4.5) and vault document records (2.9)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...wire.protocol import FINAL_STATUSES, STATUS_TYPES, StatusType
from .columns import STATUS_COLUMNS, VAULT_COLUMNS
from .dtypes import categorical, datetimes, integers, strings
from .read import Complain, Errors, as_seconds, as_text, is_result, read_path

__all__ = ["statuses", "vault"]


def statuses(data: Any, *, errors: Errors = "raise") -> pd.DataFrame:
    """One row per status object, columns `STATUS_COLUMNS`, by extraction then time.

    ``data`` is a status list response (4.5), its ``status_map``, a mapping of
    extraction id to a list of statuses (a history), a list of status objects, or a
    `Batch`. A batch gives the last status it knows of each extraction: ``ended`` for
    each result, the status a failed extraction reported (``error`` with its reason, or
    the last one of an extraction that did not finish in time), and for a failure with
    an extraction id but no status an NA ``status_type`` with ``"<stage>: <reason>"`` as
    ``message``; documents that failed before their trigger have no extraction (see
    ``batch.failures``). A result (extracted data, alone or in a list or mapping) stands
    for its ``ended`` status: at the result's creation time, without id or message.

    ``status_type`` is an ordered categorical in pipeline order (D5). When an extraction
    has several statuses, ``duration`` is the time spent in each stage (until the next
    status) and ``elapsed`` the time since its first status; otherwise they are NaT.
    Extractions keep the order of the input.
    """
    complain = Complain(errors)
    rows: dict[str, list[Any]] = {name: [] for name in
                                  ("extraction_id", "status_id", "status_type", "message",
                                   "trigger_user_id", "created")}
    for status, where, key in _status_objects(data, complain):
        if not isinstance(status, Mapping):
            complain(where, "an extraction id, not a status object: pass "
                     "client.get_statuses(ids)" if isinstance(status, str)
                     else "not a status object")
            continue
        if "status_type" not in status and is_result(status):
            status = _ended(status)
        rows["extraction_id"].append(as_text(status.get("extraction_id")) or key)
        rows["status_id"].append(as_text(status.get("id")))
        rows["status_type"].append(as_text(status.get("status_type")))
        message = status.get("message")
        rows["message"].append(message if type(message) is str else None)
        rows["trigger_user_id"].append(as_text(status.get("trigger_user_id")))
        rows["created"].append(as_seconds(status.get("creation_unix_timestamp")))
    known = STATUS_TYPES
    seen = [s for s in dict.fromkeys(rows["status_type"]) if s is not None and s not in known]
    kinds = pd.Categorical(rows["status_type"], categories=list(known) + seen, ordered=True)
    frame = pd.DataFrame({
        "extraction_id": strings(rows["extraction_id"]),
        "status_id": strings(rows["status_id"]),
        "status_type": kinds,
        "message": strings(rows["message"]),
        "trigger_user_id": categorical(rows["trigger_user_id"]),
        "created": datetimes(rows["created"]),
    })
    frame["is_final"] = pd.array(frame["status_type"].isin(sorted(FINAL_STATUSES)).to_numpy(),
                                 dtype="boolean")
    frame.loc[frame["status_type"].isna(), "is_final"] = pd.NA
    if len(frame):
        # Extractions in input order (ids are strings: sorting them would be alphabetical),
        # time order within one; the stage order breaks ties of equal times.
        first_seen, _ = pd.factorize(frame["extraction_id"])
        frame["_order"] = np.where(first_seen < 0, len(frame), first_seen)
        frame = frame.sort_values(["_order", "created", "status_type"],
                                  kind="stable").drop(columns="_order").reset_index(drop=True)
    by = frame.groupby("extraction_id", sort=False)["created"]
    frame["duration"] = pd.TimedeltaIndex(by.shift(-1) - frame["created"])
    first = by.transform("min")
    count = by.transform("size")
    elapsed = frame["created"] - first
    frame["elapsed"] = pd.TimedeltaIndex(elapsed.where(count > 1))
    return frame[list(STATUS_COLUMNS)]


def _ended(result: Mapping[str, Any]) -> dict[str, Any]:
    """The ``ended`` status a result stands for: the service keeps results of ended
    extractions only. Its time is the result's; id and message are not known."""
    data = result.get("extracted_data")
    data = data if isinstance(data, Mapping) else result
    info = data.get("extraction_info")
    info = info if isinstance(info, Mapping) else {}
    return {"extraction_id": info.get("extraction_id"), "status_type": StatusType.ENDED.value,
            "creation_unix_timestamp": data.get("creation_unix_timestamp"),
            "trigger_user_id": info.get("trigger_user_id")}


def _status_objects(data: Any, complain: Complain, where: str = "data"
                    ) -> Iterator[tuple[Any, str, str | None]]:
    """(status object, where, extraction id from a key) for every status in ``data``."""
    if data is None:
        return
    if isinstance(data, str | os.PathLike):
        if where != "data":  # only the argument itself may name a file
            complain(where, "not a status object")
            return
        data = read_path(data)
    if isinstance(data, pd.DataFrame):
        complain(where, "a DataFrame holds no status objects: pass a Batch, "
                 "client.get_statuses(ids) or a status history")
        return
    results = getattr(data, "results", None)
    failures = getattr(data, "failures", None)
    if (results is not None or failures is not None) and not isinstance(data, Mapping):
        yield from _batch_statuses(results, failures, where)
        return
    if isinstance(data, Mapping):
        if "status_map" in data:
            yield from _status_objects(data["status_map"], complain, f"{where}.status_map")
        elif "status_type" in data or is_result(data):
            yield data, where, None
        else:
            for key, value in data.items():
                if isinstance(value, Mapping):
                    yield value, f"{where}[{key!r}]", as_text(key)
                elif isinstance(value, list):  # a history: every status the id went through
                    for i, status in enumerate(value):
                        yield status, f"{where}[{key!r}][{i}]", as_text(key)
                else:
                    complain(f"{where}[{key!r}]", "not a status object")
        return
    if isinstance(data, Iterable) and not isinstance(data, bytes | bytearray):
        for i, status in enumerate(data):
            yield status, f"{where}[{i}]", None
        return
    complain(where, f"a {type(data).__name__} is not a status object")


def _batch_statuses(results: Any, failures: Any, where: str
                    ) -> Iterator[tuple[Any, str, str | None]]:
    """What a `Batch` knows of each extraction's status (see `statuses`)."""
    if isinstance(results, Mapping):
        for key, result in results.items():
            yield result, f"{where}.results[{key!r}]", as_text(key)
    elif isinstance(results, Iterable):
        for i, result in enumerate(results):
            yield result, f"{where}.results[{i}]", None
    for i, failure in enumerate(failures if isinstance(failures, Iterable) else ()):
        extraction_id = as_text(_failure_field(failure, "extraction_id"))
        details = _failure_field(failure, "details")
        status = details.get("status") if isinstance(details, Mapping) else None
        if isinstance(status, Mapping):
            yield status, f"{where}.failures[{i}]", extraction_id
        elif extraction_id is not None:  # an extraction whose status the batch never saw
            stage, reason = _failure_field(failure, "stage"), _failure_field(failure, "reason")
            yield {"message": f"{stage}: {reason}"}, f"{where}.failures[{i}]", extraction_id


def _failure_field(failure: Any, name: str) -> Any:
    """A field of a `Failure`, or of its dict: a saved batch read by the wire holds those."""
    return failure.get(name) if isinstance(failure, Mapping) else getattr(failure, name, None)


def vault(data: Any, *, errors: Errors = "raise") -> pd.DataFrame:
    """One row per vault document record (2.9), columns `VAULT_COLUMNS`.

    ``data`` is a vault list response (4.8), a list of records, or one record.
    ``num_pages`` is NA for list entries, which do not carry it.
    """
    complain = Complain(errors)
    if isinstance(data, str | os.PathLike):
        data = read_path(data)
    if isinstance(data, Mapping):
        records = data.get("documents") if "documents" in data else [data]
    else:
        records = data if data is not None else []
    if not isinstance(records, Iterable):
        complain("data.documents", "not an array")
        records = []
    rows: dict[str, list[Any]] = {name: [] for name in VAULT_COLUMNS}
    for i, record in enumerate(records):
        if not isinstance(record, Mapping):
            complain(f"data.documents[{i}]", "not a vault document record")
            continue
        for name in ("document_id", "document_name", "document_type", "content_type",
                     "owner_id"):
            rows[name].append(as_text(record.get(name)))
        rows["uploaded"].append(as_seconds(record.get("upload_unix_timestamp")))
        pages = record.get("num_pages")
        rows["num_pages"].append(pages if type(pages) is int and pages >= 0 else -1)
    return pd.DataFrame({
        "document_id": strings(rows["document_id"]),
        "document_name": strings(rows["document_name"]),
        "document_type": categorical(rows["document_type"]),
        "content_type": categorical(rows["content_type"]),
        "owner_id": categorical(rows["owner_id"]),
        "uploaded": datetimes(rows["uploaded"]),
        "num_pages": integers(rows["num_pages"]),
    })
