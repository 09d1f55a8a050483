"""Source excerpts with annotated spans, the way rustc and ruff show them.

    |
 41 |         loss.backward()
    |         --------------- graph freed here
 42 |         loss.backward()
    |         ^^^^^^^^^^^^^^^
    |
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text

from gradguard.model import Span

CONTEXT = 2
TAB_SIZE = 4
GUTTER_STYLE = "bold blue"


@dataclass(frozen=True)
class Annotation:
    """A span to mark in an excerpt: `^^^` for the finding itself, `---` for a related place."""

    span: Span
    label: str
    primary: bool


def gutter(width: int, number: int | None = None) -> Text:
    """The left margin: a right-aligned line number (or blanks) and a bar."""
    label = str(number) if number is not None else ""
    return Text(f"{label:>{width}} |", style=GUTTER_STYLE)


def gutter_width(rows: Iterable[tuple[int, int]]) -> int:
    """How wide the line numbers of excerpts around `(row, line count of its text)` pairs are (at least 2)."""
    return max([2, *(len(str(min(row + CONTEXT, count))) for row, count in rows)])


def _windows(annotations: Sequence[Annotation], line_count: int) -> list[tuple[int, int]]:
    """The row ranges to show, with context, merged where they touch (a single hidden row is shown)."""
    ranges = sorted(
        (max(1, a.span.start.row - CONTEXT), min(line_count, a.span.start.row + CONTEXT))
        for a in annotations
        if 1 <= a.span.start.row <= line_count
    )
    merged: list[tuple[int, int]] = []
    for start, end in ranges:
        if merged and start <= merged[-1][1] + 2:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _marker(line: str, annotation: Annotation, width: int, primary_style: str) -> Text:
    """The line under a source line: blanks up to the span, then `^^^`/`---` and the label."""
    span = annotation.span
    start = span.start.column
    end = span.end.column if span.end.row == span.start.row else len(line.rstrip()) + 1
    before = cell_len(line[: start - 1].expandtabs(TAB_SIZE))
    through = cell_len(line[: max(end, start) - 1].expandtabs(TAB_SIZE))
    text = gutter(width)
    text.append(" " + " " * before)
    char, style = ("^", primary_style) if annotation.primary else ("-", "bold blue")
    text.append(char * max(1, through - before), style=style)
    if annotation.label:
        text.append(" " + annotation.label, style=style)
    return text


def render(source: str, annotations: Sequence[Annotation], width: int, primary_style: str) -> list[Text]:
    """The excerpt of `source` around `annotations`, framed by empty gutter lines."""
    lines = source.splitlines()
    out = [gutter(width)]
    for index, (first, last) in enumerate(_windows(annotations, len(lines))):
        if index:
            out.append(Text("...", style=GUTTER_STYLE))
        for row in range(first, last + 1):
            line = lines[row - 1]
            text = gutter(width, row)
            shown = line.expandtabs(TAB_SIZE).rstrip()
            if shown:
                text.append(" " + shown)
            out.append(text)
            on_row = sorted(
                (a for a in annotations if a.span.start.row == row),
                key=lambda a: (a.span.start.column, not a.primary),
            )
            out.extend(_marker(line, a, width, primary_style) for a in on_row)
    out.append(gutter(width))
    return out
