"""What ships inside the package: configurations, classifiers and the demo sample.

==================  ================================================================
``configurations``  the bundled extraction configurations (``invoices``, ``receipts``)
``classifiers``     the bundled document classifier
``documents``       the demo sample: 40 generated invoices and receipts (PDF, PNG,
                    JPEG, scanned PDF), ``documents/invoices`` and ``documents/receipts``
``truth``           the sample's ground truth, one JSON file per document
==================  ================================================================

`path` gives a folder or file as a `pathlib.Path` that works from a checkout and from an
installed wheel alike. ``README.md`` beside this file says how the sample was made.

>>> path("configurations").name
'configurations'
>>> sorted(p.name for p in path("configurations").glob("*.json"))
['invoices.json', 'receipts.json']
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CLASSIFIERS", "CONFIGURATIONS", "DOCUMENTS", "ROOT", "TRUTH", "path"]

#: The folder of this package: pip installs packages as plain folders, so a Path is
#: all anyone needs (no zip import support, on purpose: the service reads these with
#: ordinary file functions).
ROOT = Path(__file__).resolve().parent


def path(*parts: str) -> Path:
    """The bundled file or folder ``parts`` (``path("documents", "invoices")``).

    FileNotFoundError, listing what there is, when nothing of that name was bundled.
    """
    target = ROOT.joinpath(*parts)
    if not target.exists():
        known = ", ".join(sorted(p.name for p in ROOT.iterdir() if not p.name.startswith("_")))
        raise FileNotFoundError(f"nothing named {'/'.join(parts)!r} is bundled; there is: {known}")
    return target


CONFIGURATIONS = ROOT / "configurations"
CLASSIFIERS = ROOT / "classifiers"
DOCUMENTS = ROOT / "documents"
TRUTH = ROOT / "truth"
