"""A picture of the cause: the failing graph around the error, as inline SVG (Jupyter, `--report-html`).

Not the whole autograd graph, as torchviz draws it, but the four things the diagnosis names: the fresh
part built by the failing call, the carrier that chained it to an older graph, the freed part of that
graph (the node autograd found empty), and the call that freed it. Drawn from the `Diagnosis` alone, so
it costs nothing until an error is explained. No dependency: the SVG is written by hand.
"""

from __future__ import annotations

import html

from gradguard.analysis.api.torch_tensor import BACKWARD
from gradguard.runtime.diagnosis import Diagnosis, ErrorKind
from gradguard.runtime.render import headline, location, note_text

_BOX_H, _GAP = 58, 44
_STYLE = {
    "fresh": ("#e8f5e9", "#2e7d32", ""),
    "carrier": ("#fff8e1", "#f9a825", ""),
    "freed": ("#eeeeee", "#757575", "6,4"),
    "freeing": ("#ffebee", "#c62828", ""),
}


def _box(x: int, y: int, width: int, kind: str, title: str, detail: str) -> str:
    fill, stroke, dash = _STYLE[kind]
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<g class="{kind}"><rect x="{x}" y="{y}" width="{width}" height="{_BOX_H}" rx="8" fill="{fill}" '
        f'stroke="{stroke}" stroke-width="2"{dashes}/>'
        f'<text x="{x + 12}" y="{y + 23}" font-weight="bold">{html.escape(title)}</text>'
        f'<text x="{x + 12}" y="{y + 44}" font-size="12">{html.escape(detail)}</text></g>'
    )


def _arrow(x1: int, y1: int, x2: int, y2: int, label: str) -> str:
    middle_x, middle_y = (x1 + x2) // 2, (y1 + y2) // 2
    return (
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#424242" stroke-width="1.5" '
        f'marker-end="url(#gg-arrow)"/>'
        f'<text x="{middle_x + 6}" y="{middle_y + 4}" font-size="12" fill="#424242">{html.escape(label)}</text>'
    )


def _width(boxes: list[tuple[str, str, str]]) -> int:
    """A box width that holds every title (14 px bold) and detail (12 px): text is never cut."""
    widest = max(max(len(title) * 8.6, len(detail) * 7.2) for _, title, detail in boxes)
    return max(260, int(widest) + 28)


def svg(d: Diagnosis) -> str:
    """The picture of one diagnosis as an `<svg>` element."""
    call = d.failing_call
    fresh_detail = f"{location(call.filename, call.line)}: {call.source.strip()}" if call else "the failing backward"
    number = f" #{call.call_index}" if call and call.call_index is not None else ""
    column: list[tuple[str, str, str, str]] = [
        ("fresh", f"fresh graph: {call.api if call else BACKWARD}{number}", fresh_detail, "")
    ]
    side: tuple[str, str, str] | None = None
    if d.error is ErrorKind.INPLACE_MODIFIED:
        name = f"`{d.carrier.expression}`" if d.carrier else "a saved tensor"
        column.append(("freeing", f"{name} modified in place", dict(d.details).get("modified at", ""), "needs the old version"))
    else:
        if d.carrier is not None:
            where = location(d.carrier.filename, d.carrier.line) if d.carrier.line is not None else "not recorded"
            column.append(("carrier", f"carrier `{d.carrier.expression}`", f"last assigned at {where}", "reaches through"))
        created = f"created at {d.created_at}" if d.created_at else "its saved tensors are gone"
        column.append(("freed", f"freed part: {d.node or 'a node of the older graph'}", created, "chained to"))
        if d.freed_by is not None:
            freeing = f"{location(d.freed_by.filename, d.freed_by.line)}: {d.freed_by.source.strip()}"
            side = ("freeing", f"freed by call #{d.freed_by.call_index}", freeing)
    box = _width([(k, t, x) for k, t, x, _ in column] + ([side] if side else []))
    left, right = 20, 20 + box + 60
    parts: list[str] = []
    for index, (kind, title, detail, label) in enumerate(column):
        y = 20 + index * (_BOX_H + _GAP)
        parts.append(_box(left, y, box, kind, title, detail))
        if index:
            parts.append(_arrow(left + box // 2, y - _GAP, left + box // 2, y, label))
    last_y = 20 + (len(column) - 1) * (_BOX_H + _GAP)
    width = left + box + 20
    if side is not None:
        side_y = max(20, last_y - _BOX_H - _GAP)
        parts.append(_box(right, side_y, box, *side))
        parts.append(_arrow(right + box // 2, side_y + _BOX_H, left + box, last_y + _BOX_H // 2, "no retain_graph"))
        width = right + box + 20
    height = last_y + _BOX_H + 20
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="gradguard-graph" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="14" role="img">'
        f"<title>{html.escape(headline(d))}</title>"
        '<defs><marker id="gg-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#424242"/></marker></defs>'
        + "".join(parts)
        + "</svg>"
    )


def html_report(d: Diagnosis) -> str:
    """A standalone HTML page: the headline, the picture, the full note (`gradguard run --report-html`)."""
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>gradguard</title></head><body>\n"
        f"<h1 style=\"font-family:sans-serif;font-size:18px\">{html.escape(headline(d))}</h1>\n"
        f"{svg(d)}\n<pre style=\"font-family:monospace\">{html.escape(note_text(d))}</pre>\n</body></html>\n"
    )
