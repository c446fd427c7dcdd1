"""Progress bars of long client work: tqdm.auto, a widget in Jupyter and text in a terminal."""

from __future__ import annotations

from typing import Any

__all__ = ["progress_bar"]


class _NoBar:
    def update(self, n: int = 1) -> None: ...
    def set_postfix(self, *args: Any, **kwargs: Any) -> None: ...
    def set_description(self, *args: Any, **kwargs: Any) -> None: ...
    def close(self) -> None: ...


def progress_bar(total: int, desc: str, enabled: bool) -> Any:
    """A bar counting documents, or (``enabled`` false) one that does nothing."""
    if not enabled:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="doc", dynamic_ncols=True)
