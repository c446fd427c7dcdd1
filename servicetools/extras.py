"""The optional parts of servicetools, the extra that installs each, and what a missing one says.

``pip install servicetools`` is the thin client and the analysis frames. Everything
heavier is an extra (``pip install 'servicetools[service,plots]'``):

===========  ==================================================================
``service``  the local reference service and its extraction engine
``scale``    the service's vault in S3-compatible object storage (boto3)
``plots``    matplotlib figures (`servicetools.plots`)
``widgets``  ipywidgets forms, with PDF page previews (`servicetools.widgets`)
``datagen``  the synthetic dev-set generator (`servicetools.datagen`)
``excel``    frames saved as Excel workbooks (`servicetools.frames.save`)
``datasets`` audits of Parquet datasets pushed down to DuckDB (`servicetools.frames.dataset`)
``scale``    PostgreSQL for the service's rows (``servicetools serve --database``)
===========  ==================================================================

Code that needs an extra calls `require` (or `load`) where it first needs it, so the
import fails with `MissingExtra`, an ImportError whose message names the extra to
install, instead of a bare ``ModuleNotFoundError``.

>>> require("plots", "math", feature="a plot")  # present: nothing happens
>>> require("plots", "no_such_module", feature="a plot")
Traceback (most recent call last):
...
servicetools.extras.MissingExtra: a plot needs the 'plots' extra (missing: no_such_module): pip install 'servicetools[plots]'
"""  # noqa: E501

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable
from types import ModuleType

__all__ = ["EXTRAS", "MissingExtra", "load", "require", "require_all"]

#: The modules each extra provides that servicetools imports (import names, not
#: distribution names); a test checks them against pyproject.toml.
EXTRAS: dict[str, tuple[str, ...]] = {
    "service": ("fastapi", "starlette", "uvicorn", "multipart", "pypdfium2", "pdfplumber",
                "rapidocr", "rapidfuzz", "babel", "jmespath", "PIL", "numpy", "isal",
                "camelot"),
    "scale": ("psycopg", "psycopg_pool", "yoyo", "boto3", "botocore"),
    "plots": ("matplotlib",),
    "widgets": ("ipywidgets", "pypdfium2", "PIL"),
    "datagen": ("reportlab", "pypdfium2", "PIL", "numpy"),
    "excel": ("openpyxl",),
    "datasets": ("duckdb",),
}


class MissingExtra(ImportError):
    """A feature needs an extra that is not installed; the message says what to install.

    ``extra`` is the extra's name, or several joined by commas (``"service,plots"``), the
    way pip takes them.
    """

    def __init__(self, extra: str, missing: list[str], feature: str) -> None:
        names = extra.split(",")
        needs = (f"the {names[0]!r} extra" if len(names) == 1
                 else "the extras " + " and ".join(repr(n) for n in names))
        super().__init__(f"{feature} needs {needs} (missing: {', '.join(missing)})"
                         f": pip install 'servicetools[{extra}]'",
                         name=missing[0] if missing else None)
        self.extra = extra
        self.missing = missing
        self.feature = feature

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.extra, self.missing, self.feature))


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing, or set to None
        return False


def require(extra: str, *modules: str, feature: str) -> None:
    """Raise `MissingExtra` unless ``modules`` (default: all of the extra's) can be imported.

    Only looks for the modules; nothing is imported, so this is cheap enough to call at
    the top of a package.
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    missing = [m for m in modules or EXTRAS[extra] if not _installed(m)]
    if missing:
        raise MissingExtra(extra, missing, feature)


def require_all(extras: Iterable[str], *, feature: str) -> None:
    """Like `require` for several extras at once: one error naming every one that is missing.

    >>> require_all(["plots", "datagen"], feature="x")  # doctest: +SKIP
    MissingExtra: x needs the extras 'plots' and 'datagen' (missing: ...): pip install ...
    """
    absent: list[str] = []
    missing: list[str] = []
    for extra in extras:
        try:
            require(extra, feature=feature)
        except MissingExtra as exc:
            absent.append(extra)
            missing += [m for m in exc.missing if m not in missing]
    if absent:
        raise MissingExtra(",".join(absent), missing, feature)


def load(module: str, extra: str, *, feature: str) -> ModuleType:
    """Import ``module``, or raise `MissingExtra` naming ``extra`` when it is not installed."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or module.split(".")[0] != exc.name.split(".")[0]:
            raise  # something inside the module is broken: not a missing extra
        raise MissingExtra(extra, [exc.name], feature) from exc
