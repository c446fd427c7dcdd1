"""What the report's pages are made of: the style sheet, tables whose cells say how they
read (numbers right-aligned, prose muted), escaping, and short forms of long text.

>>> plural(1, "batch"), plural(3, "batch"), slug_of("invoices / EU"), shorten("x" * 100)[-3:]
('1 batch', '3 batches', 'invoices-eu', 'xx…')
"""

from __future__ import annotations

import html
import re
from typing import Any

__all__ = ["STYLE", "esc", "html_table", "page_shell", "plural", "shorten", "slug_of"]

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222}
main{max-width:1320px;margin:0 auto;padding:20px 32px 48px}
h1{font-size:24px;margin:0 0 4px}
h2{font-size:19px;margin:36px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:20px 0 6px}
.lede{color:#555;margin:0 0 12px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:140px}
.card b{display:block;font-size:20px}
table{border-collapse:collapse;font-size:13px;margin:6px 0 14px;max-width:100%}
th,td{padding:4px 8px;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}
th{background:#f5f5f5;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.note{color:#555;min-width:140px;max-width:300px}
.plots{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:18px;align-items:start}
figure{margin:0}
figure.wide{grid-column:1/-1}
figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:12px;color:#555}
.warn{background:#fff4e5;border-left:4px solid #E69F00;padding:6px 12px}
dl dt{font-weight:600}
dl dd{margin:0 0 6px 16px;color:#444}
"""


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}{'es' if word.endswith('h') else 's'}"


def shorten(text: str, limit: int = 90) -> str:
    """A long condition (a date rule lists 20 formats) cut to a line or two."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def esc(x: Any) -> str:
    return html.escape(str(x))


def slug_of(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-").lower() or "all"


def html_table(header: list[str], rows: list[list[tuple[str, str]]], caption: str = "") -> str:
    """An HTML table; each cell is (text, class): ``n`` numbers, ``note`` prose."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(
        f'<td class="{cls}">{esc(text)}</td>' if cls else f"<td>{esc(text)}</td>"
        for text, cls in row) + "</tr>" for row in rows)
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page_shell(title: str, body: list[str], glossary: list[tuple[str, str]],
              glossary_title: str) -> str:
    """A whole page: ``body``'s parts, then the glossary, in the pages' one style."""
    parts = [*body, f"<h2>{esc(glossary_title)}</h2><dl>" + "".join(
        f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in glossary) + "</dl>"]
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{esc(title)}</title><style>{STYLE}</style></head><body><main>"
            + "\n".join(parts) + "</main></body></html>\n")
