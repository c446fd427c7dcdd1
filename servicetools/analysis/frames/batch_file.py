"""A saved batch file read by pyarrow straight into value columns: `read_values`.

``json.loads`` of a saved batch of 10,000 results (450 MB) takes about ten seconds and
makes some fifty million Python objects, which the careful pass (`values`) then walks.
pyarrow's JSON reader parses the same file in C, on every core, into Arrow columns
(about 1.5 s), reading only the keys the frames use (`_SCHEMA`); the value frames are
cut from those columns, and Python only sees what there is one of per extraction or
target, and the few values that did not simply pass validation.

The fast read is taken only where it gives what the careful pass gives. Anything it
cannot vouch for returns None, and the caller reads the file the careful way (which
raises or skips as ``errors`` says): a type other than the interface's (pyarrow refuses
it), a null where the careful pass expects an object, a header position that is null
(the careful pass tells a missing position from a null one), a header or record count
that the wire's `saved_batch.read` would refuse, a three-part response inside the file, a repeated
extraction id.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from ...wire import saved_batch
from .conditions import conditions
from .dtypes import strings
from .read import UsedConfiguration, as_text
from .rows import EMPTY, Rows, ValueColumns, collector_paused

__all__ = ["is_batch_file", "read_values"]

#: pyarrow parses blocks of this size in parallel; a longer line makes it read again in
#: one block (`_parse`).
_BLOCK = 8 << 20

_S, _F, _I = pa.string(), pa.float64(), pa.int64()
_L = pa.large_string()  # the texts the frames keep: what `STRING` holds, no cast after
_VALUE = pa.struct([
    ("id", _L), ("extracted_field", _L), ("extracted_cell", _L), ("table_id", _L),
    ("row", _I), ("column", _I), ("validation_passed", pa.bool_()),
    ("validation_messages", pa.list_(_S)), ("confidence", _F)])
_TARGET = pa.struct([
    ("id", _S), ("used_extraction_group_id", _S), ("used_extraction_target_id", _S),
    ("type", _S), ("confidence", _F), ("extracted_values", pa.list_(_VALUE))])
_HEADER = pa.struct([("id", _S), ("name", _S), ("position", _I)])
_CONFIG_TARGET = pa.struct([("id", _S), ("type", _S), ("name", _S),
                            ("header_schema", pa.list_(_HEADER))])
_INFO = pa.struct([("extraction_id", _S), ("extraction_name", _S),
                   ("used_extraction_configuration_id", _S),
                   ("used_extraction_configuration_name", _S)])
_DATA = pa.struct([
    ("extraction_info", _INFO), ("extracted_targets", pa.list_(_TARGET)),
    ("creation_unix_timestamp", _F), ("extracted_document_storage_id", _S),
    ("used_extraction_configuration", pa.struct([
        ("id", _S), ("name", _S), ("extraction_targets", pa.list_(_CONFIG_TARGET))])),
    # Only to see that there is none: a three-part response goes the careful way.
    ("extracted_data", pa.struct([("id", _S)]))])
#: The keys the frames read, by line of the file (`wire.saved_batch`); the rest is skipped.
_SCHEMA = pa.schema([
    ("record", _S), ("format", _S), ("version", _I), ("results", _I), ("failures", _I),
    ("extraction_id", _S), ("document", _S), ("data", _DATA)])

#: A column as pyarrow gives it: chunked when read from the file.
_Column: TypeAlias = pa.Array | pa.ChunkedArray
#: The separators and markers of the configuration keys (`_configuration_codes`):
#: control characters, which a configuration's ids and names do not hold (one that does
#: goes the careful way).
_UNIT, _RECORD, _GROUP, _NULL, _NOT_OBJECT = "\x1f", "\x1e", "\x1d", "\x00", "\x01"
_SEPARATORS = r"[\x00\x01\x1d-\x1f]"  # as a regular expression (RE2)


def is_batch_file(data: Any) -> bool:
    """Whether ``data`` is the path of a file `Batch.save` wrote (by its first line)."""
    if not isinstance(data, str | os.PathLike) or not str(data).endswith(".jsonl"):
        return False
    try:
        with open(data, encoding="utf-8") as file:
            return saved_batch.is_header_line(file.readline())
    except (OSError, UnicodeDecodeError):
        return False  # the careful read reports it


def read_values(path: str | os.PathLike[str], kinds: tuple[str, ...],
                documents: Mapping[str, str] | None = None
                ) -> dict[str, tuple[Rows, ValueColumns]] | None:
    """The rows and value columns of each of ``kinds`` (``"field"``, ``"table"``) in the
    saved batch at ``path``; None where the careful pass must read it (module docstring).
    """
    # pyarrow's allocator keeps the pages it frees (the file's blocks once parsed, then
    # the parsed batch), and numpy and Python allocate elsewhere: handing them back
    # lowers the peak (about 820 MiB against 900 for bench/frames.py's batch).
    pool = pa.default_memory_pool()
    table = _parse(path)
    if table is None:
        return None
    pool.release_unused()
    found = _values_of(path, table, kinds, documents or {})
    del table
    pool.release_unused()
    return found


def _values_of(path: str | os.PathLike[str], table: pa.Table, kinds: tuple[str, ...],
               documents: Mapping[str, str]) -> dict[str, tuple[Rows, ValueColumns]] | None:
    data = _results(path, table)
    if data is None:
        return None
    with collector_paused():
        batch = _Batch(*data, documents)
        if not batch.sound:
            return None
        out = {}
        for kind in kinds:
            found = batch.values(kind)
            if found is None:
                return None
            out[kind] = found
        return out


def _parse(path: str | os.PathLike[str]) -> pa.Table | None:
    options = pj.ParseOptions(explicit_schema=_SCHEMA, unexpected_field_behavior="ignore")
    try:
        return pj.read_json(path, read_options=pj.ReadOptions(block_size=_BLOCK),
                            parse_options=options)
    except pa.ArrowInvalid as exc:
        if "straddl" not in str(exc):  # anything but a line longer than a block
            return None
    size = Path(path).stat().st_size
    try:
        return pj.read_json(path, read_options=pj.ReadOptions(block_size=size + 1),
                            parse_options=options)
    except (pa.ArrowInvalid, OverflowError):
        return None


def _results(path: str | os.PathLike[str], table: pa.Table
             ) -> tuple[pa.ChunkedArray, list[Any], list[Any]] | None:
    """The result records' data, extraction ids and documents, if `saved_batch.read` would
    accept the file (header, record kinds and counts, failure records)."""
    if table.num_rows == 0:
        return None
    head = table.slice(0, 1).to_pylist()[0]
    if saved_batch.header_problem(head) is not None:
        return None
    records = table.column("record")
    is_result = pc.fill_null(pc.equal(records, saved_batch.RESULT), False)
    is_failure = pc.fill_null(pc.equal(records, saved_batch.FAILURE), False)
    n_results = pc.sum(is_result).as_py() or 0
    n_failures = pc.sum(is_failure).as_py() or 0
    if (n_results + n_failures != table.num_rows - 1 or head["results"] != n_results
            or head["failures"] != n_failures):
        return None
    if n_failures and not _failures_sound(path, table, is_failure, n_failures):
        return None
    # The header first, the failures last (checked): the results are the rows between,
    # a slice and not a copy.
    results = table.slice(1, n_results)
    keys, data = results.column("extraction_id"), results.column("data")
    if (keys.null_count or data.null_count
            or pc.count_distinct(keys).as_py() != len(keys)
            or pc.struct_field(data, "extracted_data").null_count != len(data)):
        return None
    return data, keys.to_pylist(), results.column("document").to_pylist()


def _failures_sound(path: str | os.PathLike[str], table: pa.Table,
                    is_failure: pa.ChunkedArray, n: int) -> bool:
    """Whether the failure records, which `Batch.save` writes last, are ones
    `saved_batch.read` takes: they are read from the file's end the way it reads them."""
    if not pc.all(is_failure.slice(table.num_rows - n)).as_py():
        return False
    for line in _last_lines(path, n):
        try:
            saved_batch.failure_fields(json.loads(line))
        except ValueError:
            return False
    return True


def _last_lines(path: str | os.PathLike[str], n: int) -> list[bytes]:
    """The last ``n`` lines of the file that are not blank."""
    with open(path, "rb") as file:
        end = file.seek(0, os.SEEK_END)
        chunk, tail = 1 << 16, b""
        while True:
            start = max(0, end - chunk)
            file.seek(start)
            tail = file.read(end - start)
            lines = [line for line in tail.split(b"\n") if line.strip()]
            if start == 0 or len(lines) > n:  # one more: the first may be cut
                return lines[-n:]
            chunk *= 4


def _texts(array: _Column) -> list[str | None]:
    """`read.as_text` of a string column: the empty string is NA."""
    return [x or None for x in array.to_pylist()]


class _Batch:
    """The columns of a batch's results that both kinds of value share."""

    def __init__(self, data: pa.ChunkedArray, keys: list[Any], named: list[Any],
                 documents: Mapping[str, str]) -> None:
        self.data = data
        info = pc.struct_field(data, "extraction_info")
        config = pc.struct_field(data, "used_extraction_configuration")
        self.extraction_id = [a or k or None for a, k in zip(
            _texts(pc.struct_field(info, "extraction_id")), keys, strict=True)]
        self.extraction_name = _texts(pc.struct_field(info, "extraction_name"))
        self.document_id = _texts(pc.struct_field(data, "extracted_document_storage_id"))
        self.document_name = [
            _document_name(d, e, i, n, documents) for d, e, i, n in zip(
                named, self.extraction_id, self.document_id, self.extraction_name,
                strict=True)]
        self.configuration_id = [a or b for a, b in zip(
            _texts(pc.struct_field(info, "used_extraction_configuration_id")),
            _texts(pc.struct_field(config, "id")), strict=True)]
        self.configuration_name = [a or b for a, b in zip(
            _texts(pc.struct_field(info, "used_extraction_configuration_name")),
            _texts(pc.struct_field(config, "name")), strict=True)]
        self.created = _floats(pc.struct_field(data, "creation_unix_timestamp"))
        self.created[~np.isfinite(self.created)] = np.nan  # read.as_seconds
        self.sound = True
        configs = _configurations(
            pc.struct_field(config, "extraction_targets").combine_chunks())
        if configs is None:
            self.sound = False
            return
        self.configs: list[UsedConfiguration] = configs
        # The columns stay in pyarrow's chunks (a block each): combining them would copy
        # the batch; the indices of list_parent_indices count across chunks.
        targets = pc.struct_field(data, "extracted_targets")
        flat = pc.list_flatten(targets)
        if flat.null_count:  # a target that is not an object: the careful pass complains
            self.sound = False
            return
        self.target_result = _numpy(pc.list_parent_indices(targets))
        self.targets = flat
        lists = pc.struct_field(flat, "extracted_values")
        self.value_counts = _numpy(pc.fill_null(pc.list_value_length(lists), 0))
        self.all_values = pc.list_flatten(lists)
        self.value_target = _numpy(pc.list_parent_indices(lists))
        self.value_is_null = _numpy(self.all_values.is_null())
        self.messages = pc.struct_field(self.all_values, "validation_messages")
        # A message that is not text (null here) sends the file the careful way.
        self.bad_messages = bool(pc.list_flatten(self.messages).null_count)
        self._number_columns: dict[str, np.ndarray] = {}

    def values(self, kind: str) -> tuple[Rows, ValueColumns] | None:
        """The rows and value columns of the targets of ``kind``; None if a value is not
        an object or a message is not text."""
        targets = self.targets
        result_of = self.target_result
        types = pc.struct_field(targets, "type")
        chosen = _numpy(pc.fill_null(pc.equal(types, kind), False))
        untyped = np.flatnonzero(_numpy(types.is_null()))
        if len(untyped):  # a partial result: the configuration says (read.kind_of)
            target_ids = pc.struct_field(targets, "used_extraction_target_id").take(
                untyped).to_pylist()
            for at, target_id in zip(untyped, target_ids, strict=True):
                config = self.configs[result_of[at]]
                chosen[at] = config.target(as_text(target_id)).get("type") == kind
        chosen &= self.value_counts > 0
        picked = np.flatnonzero(chosen)
        counts = self.value_counts[picked]
        keep = chosen[self.value_target]
        if (keep & self.value_is_null).any():  # a value that is not an object
            return None
        rows = Rows(kind == "table")
        self._add_targets(rows, picked, counts)
        self._add_extractions(rows, result_of[picked], counts)
        columns = self._value_columns(rows, None if keep.all() else keep, counts)
        if columns is None:
            return None
        return rows, columns

    def _add_extractions(self, rows: Rows, result_of_target: np.ndarray,
                         counts: np.ndarray) -> None:
        per_result = np.bincount(result_of_target, weights=counts,
                                 minlength=len(self.data)).astype(np.int64)
        used = np.flatnonzero(per_result)
        ex = rows.extractions
        for name in ("extraction_id", "extraction_name", "document_id", "document_name",
                     "configuration_id", "configuration_name"):
            column = getattr(self, name)
            ex[name] = [column[i] for i in used]
        ex["created"] = list(self.created[used])
        rows.extraction_counts = list(per_result[used])

    def _add_targets(self, rows: Rows, picked: np.ndarray, counts: np.ndarray) -> None:
        index = pa.array(picked)

        def column(name: str) -> _Column:
            return pc.struct_field(self.targets, name).take(index)

        target_ids = column("used_extraction_target_id").to_pylist()
        configs = [self.configs[i] for i in self.target_result[picked]]
        tg = rows.targets
        tg["target_id"] = target_ids
        tg["target_name"] = [c.name(t) for c, t in zip(configs, target_ids, strict=True)]
        tg["extraction_group"] = _texts(column("used_extraction_group_id"))
        tg["extracted_target_id"] = _texts(column("id"))
        tg["target_confidence"] = list(_floats(column("confidence")))
        rows.target_counts = list(counts)
        if rows.table:
            rows.target_headers = [c.headers(t) for c, t in zip(configs, target_ids,
                                                                   strict=True)]

    def _value_columns(self, rows: Rows, keep: np.ndarray | None, counts: np.ndarray
                       ) -> ValueColumns | None:
        """The per-value columns of the values ``keep`` marks (all if None), and the odd
        values into ``rows``; None if a message is not text.

        Numbers are cut in numpy from the batch's whole columns; texts filtered in
        pyarrow; messages and texts taken to Python only for the odd values.
        """
        if self.bad_messages:
            return None
        at = np.flatnonzero(keep) if keep is not None else None
        mask = pa.array(keep) if keep is not None else None

        def texts(name: str) -> _Column:
            found = pc.struct_field(self.all_values, name)
            return found if mask is None else found.filter(mask)

        def numbers(name: str) -> np.ndarray:
            found = self._numbers(name)
            return found if at is None else found[at]

        confidences = numbers("confidence")
        missing = np.isnan(confidences) & numbers("confidence_is_null")
        if missing.any():  # the target's, as the careful pass does (a new array: the
            # batch's own column is kept for the other kind)
            own = np.repeat(np.asarray(rows.targets["target_confidence"], dtype=np.float64),
                            counts)
            confidences = np.where(missing, own, confidences)
        codes = numbers("validation_passed")
        odd = np.flatnonzero((codes != 1) | (numbers("n_messages") != 0))
        _add_odd(rows, odd, codes, self.all_values, rows.key,
                 odd if at is None else at[odd])
        columns = ValueColumns(strings(texts("id")), strings(texts(rows.key)), confidences)
        if not rows.table:
            return columns
        return columns._replace(table_ids=strings(texts("table_id")),
                                cell_rows=numbers("row"), cell_columns=numbers("column"))

    def _numbers(self, name: str) -> np.ndarray:
        """A number column of all values as numpy (kept for the next kind): confidences
        (NaN for null), validation codes (1 true, 0 false, 2 null), message counts (-1
        for null), positions (-1 for null or negative)."""
        found = self._number_columns.get(name)
        if found is not None:
            return found
        if name == "confidence_is_null":
            found = _numpy(pc.struct_field(self.all_values, "confidence").is_null())
        elif name == "n_messages":
            found = _numpy(pc.fill_null(pc.list_value_length(self.messages), -1))
        else:
            column = pc.struct_field(self.all_values, name)
            if name == "confidence":
                found = _floats(column)
            elif name == "validation_passed":
                found = _numpy(pc.fill_null(column, False)).astype(np.int8)
                found[_numpy(column.is_null())] = 2
            else:
                found = _positions(column)
        self._number_columns[name] = found
        return found


def _add_odd(rows: Rows, odd: np.ndarray, codes: np.ndarray, values: _Column, key: str,
             where: np.ndarray) -> None:
    """The values that are not a plain pass (at ``odd`` in the frame, ``where`` among
    ``values``), as `values._add_odd` keeps them."""
    rows.odd_at = odd.tolist()
    rows.odd_passed = codes[odd].tolist()
    index = pa.array(where)
    messages = pc.struct_field(values, "validation_messages").take(index).to_pylist()
    texts = pc.struct_field(values, key).take(index).to_pylist()
    for msgs, text in zip(messages, texts, strict=True):
        if msgs:
            kept = tuple(msgs)
            rows.odd_messages.append(kept)
            rows.odd_conditions.append(conditions(kept, text))
        else:
            rows.odd_messages.append(EMPTY if msgs is not None else None)
            rows.odd_conditions.append(None)


def _numpy(array: _Column) -> np.ndarray:
    """A writable numpy copy of an Arrow array without nulls."""
    return np.array(array.to_numpy(zero_copy_only=False))


def _floats(array: _Column) -> np.ndarray:
    """Numbers as float64, NaN for null."""
    return np.asarray(_numpy(pc.fill_null(array, np.nan)), dtype=np.float64)


def _positions(array: _Column) -> np.ndarray:
    """Row or column positions, -1 for a missing or negative one."""
    out = _numpy(pc.fill_null(array, -1)).astype(np.int64)
    out[out < 0] = -1
    return out


def _document_name(named: Any, extraction_id: str | None, document_id: str | None,
                   extraction_name: str | None, documents: Mapping[str, str]) -> Any:
    """`read.ResultMeta`'s document name: the batch's, the mapping's, the extraction's."""
    name = named
    if name is None and documents:
        name = documents.get(extraction_id or "") or documents.get(document_id or "")
    return as_text(name) or extraction_name


def _list_parts(lists: pa.ListArray) -> tuple[pa.Array, pa.Array]:
    """The offsets (from 0) and the values of a list array, slices taken into account."""
    offsets = lists.offsets
    first, last = offsets[0].as_py(), offsets[-1].as_py()
    return pc.subtract(offsets, first), lists.values.slice(first, last - first)


def _configurations(targets: pa.ListArray) -> list[UsedConfiguration] | None:
    """Each result's `UsedConfiguration`, one per distinct configuration; None when a
    header position is null (the careful pass tells that from a missing one), or when a
    configuration's text holds one of the separators of `_configuration_codes`."""
    target_offsets, flat = _list_parts(targets)
    schema = pc.struct_field(flat, "header_schema")
    header_offsets, headers = _list_parts(schema)
    positions = pc.struct_field(headers, "position")
    if positions.null_count > headers.null_count:
        return None
    texts = [pc.struct_field(headers, k) for k in ("id", "name")] + [
        pc.struct_field(flat, k) for k in ("id", "type", "name")]
    if any(pc.any(pc.match_substring_regex(text, _SEPARATORS)).as_py() for text in texts):
        return None
    codes = _configuration_codes(targets, target_offsets, flat, schema, header_offsets,
                                 headers)
    first: dict[int, int] = {}
    for i, code in enumerate(codes):
        first.setdefault(code, i)
    built = {code: UsedConfiguration(targets[i].as_py()) for code, i in first.items()}
    return [built[code] for code in codes]


def _configuration_codes(targets: pa.ListArray, target_offsets: pa.Array,
                         flat: pa.StructArray, schema: pa.ListArray, header_offsets: pa.Array,
                         headers: pa.StructArray) -> list[int]:
    """A code per result, equal for results whose configurations give the same names,
    types and headers: each configuration joined into one text in C (its parts hold no
    separator: `_configurations` checked)."""
    def joined(*parts: pa.Array) -> pa.Array:
        return pc.binary_join_element_wise(
            *(pc.cast(p, pa.string()) for p in parts), _UNIT,
            null_handling="replace", null_replacement=_NULL)

    one_header = joined(*(pc.struct_field(headers, k) for k in ("id", "name", "position")))
    one_header = pc.if_else(headers.is_valid(), one_header, _NOT_OBJECT)
    header_lists = pa.ListArray.from_arrays(header_offsets, one_header,
                                            mask=schema.is_null())
    header_texts = pc.fill_null(pc.binary_join(header_lists, _RECORD), _NULL)
    one_target = joined(*(pc.struct_field(flat, k) for k in ("id", "type", "name")),
                        header_texts)
    one_target = pc.if_else(flat.is_valid(), one_target, _NOT_OBJECT)
    target_lists = pa.ListArray.from_arrays(target_offsets, one_target,
                                            mask=targets.is_null())
    keys = pc.fill_null(pc.binary_join(target_lists, _GROUP), _NULL)
    return pc.dictionary_encode(keys).indices.to_pylist()
