"""Reading the input: results wherever they come from, and what each one says about itself.

Every converter accepts the same inputs (see the package docstring): one result or
three-part response (a `Result` or any mapping), a list or ``{extraction_id: result}``
mapping of them, a `Batch`, or a ``.json`` / ``.jsonl`` path. `result_items` finds the
results in any of these, `read_results` unwraps each and reads its `ResultMeta` once.
Problems go to a `Complain`, which raises `FramesError` or counts, as ``errors`` says.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from ...wire import saved_batch

__all__ = [
    "Complain",
    "Configurations",
    "Errors",
    "FramesError",
    "Item",
    "ResultMeta",
    "UsedConfiguration",
    "as_number",
    "as_seconds",
    "as_text",
    "extracted_data",
    "is_result",
    "kind_of",
    "read_path",
    "read_results",
    "result_items",
]

Errors = Literal["raise", "ignore"]


class FramesError(ValueError):
    """Malformed extracted data met with ``errors="raise"``; the message says where."""


class Complain:
    """Raise or count a problem, as ``errors`` says."""

    __slots__ = ("errors", "count")

    def __init__(self, errors: str) -> None:
        if errors not in ("raise", "ignore"):
            raise ValueError(f"errors must be 'raise' or 'ignore', not {errors!r}")
        self.errors = errors
        self.count = 0

    def __call__(self, where: str, problem: str) -> None:
        if self.errors == "raise":
            raise FramesError(f"{where}: {problem}")
        self.count += 1


# -- scalars ---------------------------------------------------------------------------------
def as_text(x: Any) -> str | None:
    """An id or name as text; numbers become text, empty strings and the rest become NA."""
    if type(x) is str:
        return x or None
    if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x):
        return str(x)
    return None


def as_number(x: Any) -> float:
    """A number as float; anything else (booleans included) is NaN."""
    if isinstance(x, int | float) and not isinstance(x, bool):
        return float(x)
    return math.nan


def as_seconds(x: Any) -> float:
    """A unix timestamp, or NaN when it is not a finite number."""
    v = as_number(x)
    return v if math.isfinite(v) else math.nan


# -- finding the results ---------------------------------------------------------------------
def is_result(obj: Mapping[str, Any]) -> bool:
    """Whether a mapping is a result (extracted data or a three-part response)."""
    return ("extracted_targets" in obj or "extraction_info" in obj or "extracted_data" in obj
            or "used_extraction_configuration" in obj)


def read_path(path: str | os.PathLike[str]) -> Any:
    """The contents of a ``.json`` or ``.jsonl`` file; a saved batch comes back as the
    wire's `SavedBatch` (results, documents, failures as dicts, configuration ...), which
    the converters take as they take a `Batch`."""
    text = Path(path).read_text(encoding="utf-8")
    if str(path).endswith(".jsonl"):
        if saved_batch.is_header_line(text.split("\n", 1)[0]):
            return saved_batch.read(path)
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


#: One input result: (mapping, where, document name from a Batch, fallback extraction id).
Item = tuple[Any, str, "str | None", "str | None"]


def result_items(obj: Any, complain: Complain, where: str = "data") -> Iterator[Item]:
    """Each result in ``obj`` (three-part responses still whole), depth first."""
    if obj is None:
        return
    if isinstance(obj, str | os.PathLike):
        if where != "data":  # only the argument itself may name a file
            complain(where, "not an extracted data object")
            return
        obj = read_path(obj)
    results = getattr(obj, "results", None)
    if results is not None and not isinstance(obj, Mapping):  # a Batch, by duck typing
        documents = getattr(obj, "documents", None)
        documents = documents if isinstance(documents, Mapping) else {}
        if isinstance(results, Mapping):
            for key, result in results.items():
                yield result, f"{where}.results[{key!r}]", documents.get(key), as_text(key)
        else:
            for i, result in enumerate(results):
                yield result, f"{where}.results[{i}]", None, None
        return
    if isinstance(obj, Mapping):
        if is_result(obj):
            yield obj, where, None, None
            return
        for key, value in obj.items():  # {extraction_id: result}
            if isinstance(value, Mapping) and is_result(value):
                yield value, f"{where}[{key!r}]", None, as_text(key)
            else:
                complain(f"{where}[{key!r}]", "not an extracted data object")
        return
    if isinstance(obj, bytes | bytearray):
        complain(where, "bytes: parse the JSON first (json.loads)")
        return
    if isinstance(obj, Iterable):
        for i, item in enumerate(obj):
            if isinstance(item, Mapping) and is_result(item):
                yield item, f"{where}[{i}]", None, None
            else:
                yield from result_items(item, complain, f"{where}[{i}]")
        return
    complain(where, f"a {type(obj).__name__} is not extracted data")


def extracted_data(item: Any, where: str, complain: Complain) -> dict[str, Any] | None:
    """The extracted data object of an item (unwrapping a three-part response)."""
    if type(item) is not dict:
        if isinstance(item, Mapping):
            item = dict(item)
        else:
            complain(where, "not an extracted data object")
            return None
    inner = item.get("extracted_data")
    if inner is not None:
        if type(inner) is not dict:
            complain(f"{where}.extracted_data", "not an object")
            return None
        return inner
    return item


def read_results(data: Any, errors: str, documents: Mapping[str, str] | None
                 ) -> Iterator[tuple[dict[str, Any], str, ResultMeta]]:
    """(extracted data, where, its `ResultMeta`) for each result in ``data``."""
    complain = Complain(errors)
    configs = Configurations()
    for item, where, document, key in result_items(data, complain):
        extracted = extracted_data(item, where, complain)
        if extracted is not None:
            yield extracted, where, ResultMeta(extracted, where, document, key,
                                               documents or {}, complain, configs)


# -- what a result says about itself ---------------------------------------------------------
class ResultMeta:
    """What one result says about itself; read once per result."""

    __slots__ = ("extraction_id", "extraction_name", "document_id", "document_name",
                 "configuration_id", "configuration_name", "created", "targets", "config",
                 "info")

    def __init__(self, data: dict[str, Any], where: str, document: str | None,
                 key: str | None, documents: Mapping[str, str], complain: Complain,
                 configs: Configurations | None = None) -> None:
        info = data.get("extraction_info")
        if type(info) is not dict:
            if info is not None:
                complain(f"{where}.extraction_info", "not an object")
            info = {}
        self.info = info
        self.extraction_id = as_text(info.get("extraction_id")) or key
        self.extraction_name = as_text(info.get("extraction_name"))
        self.document_id = as_text(data.get("extracted_document_storage_id"))
        name = document
        if name is None and documents:
            name = documents.get(self.extraction_id or "") or documents.get(
                self.document_id or "")
        self.document_name = as_text(name) or self.extraction_name
        config = data.get("used_extraction_configuration")
        if type(config) is not dict:
            if config is not None:
                complain(f"{where}.used_extraction_configuration", "not an object")
            config = {}
        self.configuration_id = (as_text(info.get("used_extraction_configuration_id"))
                                 or as_text(config.get("id")))
        self.configuration_name = (as_text(info.get("used_extraction_configuration_name"))
                                   or as_text(config.get("name")))
        self.created = as_seconds(data.get("creation_unix_timestamp"))
        targets = data.get("extracted_targets")
        if type(targets) is not list:
            if targets is not None:
                complain(f"{where}.extracted_targets", "not an array")
            targets = []
        self.targets: list[Any] = targets
        targets_of_config = config.get("extraction_targets")
        self.config = (UsedConfiguration(targets_of_config) if configs is None
                       else configs.get(config.get("id"), targets_of_config))


class Configurations:
    """The `UsedConfiguration` of each distinct used configuration of a pass, read once.

    A batch's results each carry a copy of the configuration they used (equal, but
    separate objects once parsed); indexing its targets and reading its header names
    again for every result took about a tenth of a profiled pass. A copy is shared only
    when its targets are equal to the first copy's (one C-level comparison, about 10 us
    a result), so a configuration changed between two extractions, under the same id,
    keeps its own names.
    """

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[Any, list[tuple[Any, UsedConfiguration]]] = {}

    def get(self, config_id: Any, targets: Any) -> UsedConfiguration:
        key = config_id if type(config_id) is str else None
        versions = self._seen.setdefault(key, [])
        for seen_targets, used in versions:
            if seen_targets is targets or seen_targets == targets:
                return used
        used = UsedConfiguration(targets)
        if len(versions) < 8:  # a configuration edited often: compare with a few only
            versions.append((targets, used))
        return used


class UsedConfiguration:
    """Target names, types and header names of a used configuration, read on demand."""

    __slots__ = ("targets", "_by_id", "_names", "_headers")

    def __init__(self, targets: Any) -> None:
        self.targets = targets if type(targets) is list else []
        self._by_id: dict[str, dict[str, Any]] | None = None
        self._names: dict[str, str] = {}
        self._headers: dict[str | None, dict[int, str]] = {}

    def _index(self) -> dict[str, dict[str, Any]]:
        self._by_id = {t["id"]: t for t in self.targets
                       if type(t) is dict and type(t.get("id")) is str}
        # D9: a target without a name goes by its id.
        self._names = {i: as_text(t.get("name")) or i for i, t in self._by_id.items()}
        return self._by_id

    def target(self, target_id: str | None) -> dict[str, Any]:
        by_id = self._by_id if self._by_id is not None else self._index()
        return by_id.get(target_id, {}) if type(target_id) is str else {}

    def name(self, target_id: str | None) -> str | None:
        if self._by_id is None:
            self._index()
        return self._names.get(target_id, target_id) if type(target_id) is str else None

    def headers(self, target_id: str | None) -> dict[int, str]:
        """Header names by position (shared between calls: read, don't change)."""
        found = self._headers.get(target_id)
        if found is None:
            found = self._headers[target_id] = self._read_headers(target_id)
        return found

    def _read_headers(self, target_id: str | None) -> dict[int, str]:
        schema = self.target(target_id).get("header_schema")
        out: dict[int, str] = {}
        if type(schema) is list:
            for i, column in enumerate(schema):
                if type(column) is not dict:
                    continue
                pos = column.get("position", i)
                name = as_text(column.get("name")) or as_text(column.get("id"))
                if type(pos) is int and name is not None:
                    out[pos] = name
        return out


def kind_of(target: dict[str, Any], config: UsedConfiguration) -> Any:
    """A target's ``type``, from the configuration when the target lacks one."""
    kind = target.get("type")
    if kind is None:  # partial result: the configuration still says
        kind = config.target(as_text(target.get("used_extraction_target_id"))).get("type")
    return kind
