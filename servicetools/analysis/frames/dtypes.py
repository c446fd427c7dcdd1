"""Column builders: plain lists or arrays -> the dtypes every frame uses.

Names (and the ids of a configuration's parts) that repeat become categoricals in
first-seen order; ids of what a batch holds many of (`columns.ID_COLUMNS`) and texts the
`STRING` dtype; flags nullable booleans, positions nullable Int64, timestamps UTC
datetimes in nanoseconds, whatever the input's size (an empty frame has the same
dtypes). `observed` drops the categories a subset of a frame no longer uses.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "STRING",
    "booleans",
    "categorical",
    "datetimes",
    "integers",
    "nonblank",
    "objects",
    "observed",
    "ordered_frame",
    "sparse_categorical",
    "strings",
]

try:  # pandas >= 2.3: the string dtype that pandas 3 infers for text
    STRING: Any = pd.StringDtype(na_value=np.nan)
except TypeError:  # pragma: no cover - older pandas keeps text as object
    STRING = object

_TEXT_OR_NONE = {str, type(None)}

#: Whether `STRING` keeps its texts in pyarrow (then `strings` builds them there directly).
_ARROW_STRINGS = getattr(STRING, "storage", None) == "pyarrow"


def strings(values: list[Any] | pa.Array | pa.ChunkedArray,
            counts: np.ndarray | None = None) -> Any:
    """Texts (``None`` for missing) as the `STRING` dtype; ``counts`` repeats each entry
    (one id per extraction or target, repeated for its values).

    pyarrow reads texts and NA-likes in one C loop, as pandas would; pandas' own
    conversion checks each element in Python first (three times pyarrow's time for the
    1.7 million values of bench/frames.py), so it only converts what pyarrow refuses
    (numbers ...), to text as before. An Arrow array of texts is taken as it is.
    """
    if isinstance(values, pa.Array | pa.ChunkedArray):  # a reader's (frames.batch_file)
        values = values.cast(pa.large_string())
        if _ARROW_STRINGS and counts is None:
            return pd.array(values, dtype=STRING)
        values = values.to_pylist()
    if _ARROW_STRINGS:
        try:
            arrow = pa.array(values, type=pa.large_string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
        else:
            if counts is not None:
                arrow = arrow.take(_repeat_index(len(arrow), counts))
            return pd.array(arrow, dtype=STRING)  # wraps the arrow array: no copy, no check
    array = pd.array(values, dtype=STRING)
    if counts is None:
        return array
    # A take of the few entries: converting the repeated list costs ten times as much
    # (120 ms against 13 ms for the 1.5 million cells of bench/frames.py).
    return array.take(_repeat_index(len(array), counts))


def _repeat_index(n: int, counts: np.ndarray) -> np.ndarray:
    """The positions ``0 .. n-1``, each repeated ``counts`` times: a take's indices."""
    # int32 where it fits: half the memory of int64 indices, which are as long as the
    # frame (pyarrow and pandas take either).
    dtype = np.int32 if n < 2**31 else np.int64
    return np.repeat(np.arange(n, dtype=dtype), counts)


def categorical(values: list[Any] | np.ndarray, counts: np.ndarray | None = None
                ) -> pd.Categorical:
    """Categories in first-seen order; ``counts`` repeats each entry (per-target lists)."""
    found = _text_categorical(values)
    if found is None:
        arr = np.empty(len(values), dtype=object)
        arr[:] = values
        codes, uniques = pd.factorize(arr)
        found = pd.Categorical.from_codes(codes, categories=pd.Index(uniques, dtype=STRING))
    if counts is None:
        return found
    # Repeated in the categorical's own small code type (int8 for a few categories): eight
    # times less to write than the factorized intp codes, and nothing left to narrow.
    return pd.Categorical.from_codes(np.repeat(found.codes, counts), dtype=found.dtype)


def _text_categorical(values: list[Any] | np.ndarray) -> pd.Categorical | None:
    """`categorical` of texts and Nones by a dict, or None for other values.

    A dict keeps first-seen order and hashes a text once; pandas' factorize of an object
    array does the same work in more steps (half the time again for the 200,000 target
    names of bench/frames.py). Numbers, NaN and the like are left to pandas, whose idea
    of equal and missing they follow.
    """
    try:
        index = dict.fromkeys(values)
    except TypeError:  # unhashable
        return None
    if not set(map(type, index)) <= _TEXT_OR_NONE:
        return None
    missing = None in index
    if missing:
        del index[None]
    categories = list(index)
    index.update(zip(categories, range(len(categories)), strict=True))
    if missing:
        index[None] = -1
    codes = np.fromiter(map(index.__getitem__, values), dtype=np.intp, count=len(values))
    return pd.Categorical.from_codes(codes, categories=pd.Index(categories, dtype=STRING))


def sparse_categorical(rows: int, at: list[int], values: list[Any]) -> pd.Categorical:
    """A categorical of ``rows`` entries that is NA except at ``at``, which get ``values``."""
    found = categorical(values)
    codes = np.full(rows, -1, dtype=found.codes.dtype)  # the final code type: no copy
    codes[at] = found.codes
    return pd.Categorical.from_codes(codes, dtype=found.dtype)


def booleans(codes: list[int] | np.ndarray) -> pd.arrays.BooleanArray:
    """Nullable booleans from codes 1 (true), 0 (false), 2 (missing)."""
    arr = np.asarray(codes, dtype=np.int8)
    return pd.arrays.BooleanArray(arr == 1, arr == 2)


def integers(values: list[int] | np.ndarray) -> pd.arrays.IntegerArray:
    """Nullable Int64 from integers where -1 stands for missing."""
    arr = np.asarray(values, dtype=np.int64)
    return pd.arrays.IntegerArray(arr, arr < 0)


def objects(values: list[Any]) -> np.ndarray:
    """An object array with one element per entry, tuples included."""
    # fromiter keeps each tuple as one element where np.array would nest them.
    return np.fromiter(values, dtype=object, count=len(values))


def datetimes(seconds: list[float] | np.ndarray, counts: np.ndarray | None = None
              ) -> pd.DatetimeIndex:
    """UTC datetimes from unix timestamps (NaN gives NaT); ``counts`` repeats each entry."""
    # Fixed unit: pandas picks another for empty input, and dtypes must not depend on size.
    out = pd.to_datetime(np.asarray(seconds, dtype=float), unit="s", utc=True).as_unit("ns")
    return out if counts is None else out.repeat(counts)


def nonblank(texts: Any) -> np.ndarray:
    """Whether each of `strings`' texts holds more than whitespace (False for NA)."""
    if isinstance(texts, pd.arrays.ArrowStringArray):
        # Blank: empty, or whitespace only by the Unicode whitespace that pandas'
        # .str.strip() trims (pyarrow's utf8_trim_whitespace; utf8_is_space tests the
        # same characters). No trimmed copy of the texts: a third of the time and memory.
        arrow = pa.array(texts)
        blank = pc.or_(pc.utf8_is_space(arrow), pc.equal(arrow, ""))
        filled = pc.fill_null(pc.invert(blank), False)
        return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=bool)
    return (pd.Series(texts, copy=False).str.strip().str.len().gt(0).fillna(False)
            .to_numpy(bool))


def observed(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each categorical (columns and index) holding only the categories its
    rows use, in the same order; ``frame`` itself when nothing is unused.

    The toolkit returns subsets through this, so ``value_counts()`` of what it returns
    lists no zero rows for the targets or documents filtered out.
    """
    unused = [i for i, dtype in enumerate(frame.dtypes)
              if isinstance(dtype, pd.CategoricalDtype) and _has_unused(frame.iloc[:, i].array)]
    index = frame.index
    fix_index = isinstance(index, pd.CategoricalIndex) and _has_unused(index.array)
    if not unused and not fix_index:
        return frame
    out = frame.copy(deep=False)
    for i in unused:  # by position: a column name may repeat
        out.isetitem(i, out.iloc[:, i].cat.remove_unused_categories())
    if fix_index:
        out.index = index.remove_unused_categories()
    return out


def _has_unused(values: pd.Categorical) -> bool:
    codes = np.asarray(values.codes)
    return bool(np.bincount(codes[codes >= 0], minlength=len(values.categories)).min(
        initial=1) == 0)


def ordered_frame(columns: dict[str, Any], order: tuple[str, ...]) -> pd.DataFrame:
    """The frame of ``columns`` in the given column order, without copying them."""
    return pd.DataFrame({name: columns[name] for name in order}, copy=False)
