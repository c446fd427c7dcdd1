"""servicetools: audit document data extraction from Jupyter.

The client side (this package's top level) never imports the reference service;
``servicetools.service`` needs the ``service`` extra.
"""

from .local import LocalService, LocalServiceError

__version__ = "0.1.0"

__all__ = [
    "LocalService",
    "LocalServiceError",
    "__version__",
]
