"""What users read: the plain-text note (PEP 678), a rich panel for terminals, and IPython output.

The note goes on the exception itself, so it shows in plain tracebacks, logs and CI output. On a
terminal (`gradguard run`, or a script run with the monitor installed) the same content is drawn as a
rich panel after the traceback; in IPython/Jupyter the exception's `_render_traceback_` shows the
standard traceback followed by the panel (HTML in Jupyter). rich is imported only when drawing.
"""

from __future__ import annotations

import os
import sys
import textwrap
import traceback
from collections.abc import Callable
from typing import Any

from gradguard.analysis.api.torch_tensor import BACKWARD, RETAIN_GRAPH
from gradguard.runtime.diagnosis import CallSite, Diagnosis, ErrorKind, reason_for

NOTE_PREFIX = "gradguard"
FAILED_PREFIX = "gradguard: could not explain this error"
WIDTH = 110


def is_gradguard_note(note: object) -> bool:
    """True for a note gradguard attached."""
    return isinstance(note, str) and note.startswith(("gradguard: ", "gradguard (rank "))


def has_gradguard_note(exc: BaseException) -> bool:
    """True when gradguard already annotated this exception (nested calls see the same one)."""
    return any(is_gradguard_note(note) for note in getattr(exc, "__notes__", ()) or ())


def failure_note(error: BaseException) -> str:
    """The one-line note attached when building the diagnosis itself failed."""
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{FAILED_PREFIX} ({type(error).__name__}: {text[:200]}); the error above is unchanged."


def _path(filename: str | None) -> str:
    if not filename:
        return "?"
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith("..") else relative


def location(filename: str | None, line: int | str | None) -> str:
    """`path:line`, or IPython's own `Cell In[N], line L` for a notebook or IPython cell."""
    from gradguard.runtime.source import cell_number

    number = cell_number(filename)
    if number is not None:
        return f"Cell In[{number}], line {line}"
    return f"{_path(filename)}:{line}"


def _split_location(text: str) -> str:
    """A `file:line` text as `location` shows it."""
    filename, _, line = text.rpartition(":")
    return location(filename, line) if filename else text


def _site(site: CallSite) -> str:
    return f"{location(site.filename, site.line)} in {site.function}()"


def _rule_title(code: str) -> str:
    try:
        from gradguard import catalogue

        return f"{code} {catalogue.get(code).name}"
    except Exception:  # noqa: BLE001 - the catalogue is documentation; never fail the note on it
        return code


def headline(d: Diagnosis) -> str:
    """The first line of the note: what happened, in one sentence."""
    who = NOTE_PREFIX + (f" (rank {d.rank} of {d.world_size})" if d.rank is not None else "")
    if d.error is ErrorKind.INPLACE_MODIFIED:
        name = f" `{d.carrier.expression}`" if d.carrier else ""
        return f"{who}: a tensor{name} that autograd saved for {d.node or BACKWARD} was modified in place"
    call = d.failing_call
    number = f"#{call.call_index}" if call and call.call_index is not None else ""
    what = f"{call.api if call else BACKWARD} call {number}".strip()
    if d.freed_by is not None:
        return f"{who}: {what} reused a graph that call #{d.freed_by.call_index} freed" + (
            f" ({d.node})" if d.node else ""
        )
    return f"{who}: {what} reused a graph that was already freed" + (f" ({d.node})" if d.node else "")


def rows(d: Diagnosis) -> list[tuple[str, str, str]]:
    """(label, text, code) rows shared by the note and the panel; `code` is source shown under text."""
    out: list[tuple[str, str, str]] = []
    if d.failing_call:
        index = f", call #{d.failing_call.call_index}" if d.failing_call.call_index is not None else ""
        out.append(("failing call", _site(d.failing_call) + index, d.failing_call.source))
    if d.called_by:
        out.append(("called by", _split_location(d.called_by), ""))
    if d.error is ErrorKind.DOUBLE_BACKWARD:
        if d.freed_by:
            how = "" if d.freed_by_exact else " (inferred from creation order)"
            out.append(
                (
                    "freed by",
                    f"{_site(d.freed_by)}, call #{d.freed_by.call_index}, ran without retain_graph{how}",
                    d.freed_by.source,
                )
            )
        else:
            out.append(("freed by", "not recorded (before install, another thread, or too long ago)", ""))
        if d.node:
            out.append(("freed node", d.node + (f", created at {d.created_at}" if d.created_at else ""), ""))
    if d.carrier:
        scope = d.carrier.scope
        where = f" in {scope}()" if scope not in ("<module>", "<unknown>") else ""
        if "." in d.carrier.expression and scope.isidentifier() and scope[:1].isupper():
            where = f" on {scope}"
        assigned = (
            f", last assigned at {location(d.carrier.filename, d.carrier.line)}" if d.carrier.line is not None else ""
        )
        aliases = f" (also {', '.join(d.carrier.aliases[:3])})" if d.carrier.aliases else ""
        label = "tensor" if d.error is ErrorKind.INPLACE_MODIFIED else "carrier"
        out.append((label, f"`{d.carrier.expression}`{where}{assigned}{aliases}", d.carrier.source))
    for label, text in d.details:
        if label == "modified at":
            where, _, code = text.partition(": ")
            out.append((label, _split_location(where), code))
            continue
        out.append((label, text, ""))
    out.append(("why", reason_for(d), ""))
    if d.hint:
        out.append(("hint", d.hint, ""))
    out.append(("fix", d.fix.where, d.fix.suggestion))
    if d.fix.retain_graph_note:
        out.append((RETAIN_GRAPH, d.fix.retain_graph_note, ""))
    if d.rule:
        out.append(("rule", f"{_rule_title(d.rule)}: run `gradguard rule {d.rule}`", ""))
    return out


def note_text(d: Diagnosis) -> str:
    """The plain-text note attached to the exception."""
    lines = [headline(d)]
    indent = " " * 16
    for label, text, code in rows(d):
        wrapped = textwrap.wrap(text, width=WIDTH, initial_indent=f"  {label:<13} ", subsequent_indent=indent)
        lines.extend(wrapped or [f"  {label}"])
        for code_line in code.splitlines():
            lines.append(f"{indent}  {code_line}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# rich


def panel(d: Diagnosis) -> Any:
    """The diagnosis as a rich Panel."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.syntax import Syntax
    from rich.table import Table
    from rich.text import Text

    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(overflow="fold")
    for label, text, code in rows(d):
        cell: Any = Text(text, overflow="fold")
        if code:
            # Wrapped, never cut: the fix line is the one a user copies, whatever the terminal's width.
            syntax = Syntax(code, "python", theme="ansi_dark", background_color="default", word_wrap=True)
            cell = Group(Text(text, overflow="fold"), syntax)
        table.add_row(label, cell)
    return Panel(table, title=Text(headline(d), style="bold red"), title_align="left", border_style="red")


def print_panel(d: Diagnosis, file: Any = None) -> None:
    """Draw the panel on `file` (stderr by default), with colour only on a terminal."""
    from rich.console import Console

    Console(file=file or sys.stderr, stderr=file is None, highlight=False).print(panel(d))


def panel_ansi(d: Diagnosis, width: int = 100) -> str:
    """The panel as ANSI text (for IPython terminals)."""
    from rich.console import Console

    console = Console(width=width, force_terminal=True, record=False, highlight=False, file=_Null())
    with console.capture() as capture:
        console.print(panel(d))
    return capture.get()


def panel_html(d: Diagnosis) -> str:
    """The panel as standalone HTML (for Jupyter)."""
    from rich.console import Console

    console = Console(width=110, record=True, file=_Null(), highlight=False, force_terminal=True)
    console.print(panel(d))
    return console.export_html(inline_styles=True, code_format="<pre style=\"font-family:monospace\">{code}</pre>")


class _Null:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        return None


def format_without_note(exc: BaseException, tb: Any = None) -> list[str]:
    """The standard traceback of `exc`, leaving out gradguard's note (shown as a panel instead)."""
    formatted = traceback.TracebackException(type(exc), exc, tb if tb is not None else exc.__traceback__)
    notes = getattr(formatted, "__notes__", None)
    if notes:
        formatted.__notes__ = [n for n in notes if not is_gradguard_note(n)]
    return list(formatted.format())


# --------------------------------------------------------------------------------------------------
# IPython / Jupyter and terminals


def ipython_renderer(d: Diagnosis, note: str) -> Callable[[], list[str]]:
    """A `_render_traceback_` for the exception: standard traceback, then the panel.

    It holds the diagnosis only (never the exception: that would make a reference cycle through the
    traceback's frames). IPython stores the exception in `sys.last_value` before calling it, and may
    call it more than once for the same error: the HTML panel is scheduled once.
    """
    scheduled: list[bool] = []

    def _render_traceback_() -> list[str]:
        exc = sys.last_value
        if exc is None or not any(n is note for n in getattr(exc, "__notes__", ()) or ()):
            raise LookupError("not the exception this renderer was made for")
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            raise LookupError("no IPython shell")
        notes = exc.__notes__
        exc.__notes__ = [n for n in notes if n is not note]
        try:
            lines = shell.InteractiveTB.structured_traceback(type(exc), exc, exc.__traceback__)
        finally:
            exc.__notes__ = notes
        if _is_kernel(shell):
            if not scheduled:
                scheduled.append(True)
                _display_after_cell(shell, d)
            return [*lines, "", *headline(d).splitlines(), "(gradguard's diagnosis is shown below)"]
        return [*lines, panel_ansi(d)]

    return _render_traceback_


def _is_kernel(shell: Any) -> bool:
    return hasattr(shell, "kernel")


def _display_after_cell(shell: Any, d: Diagnosis) -> None:
    """Show the HTML panel once the cell's error output is out (a one-shot post_run_cell callback)."""

    def _show(*_: Any) -> None:
        try:
            shell.events.unregister("post_run_cell", _show)
        except ValueError:
            pass
        from IPython.display import display

        from gradguard.runtime.picture import svg

        display({"text/html": panel_html(d) + svg(d), "text/plain": note_text(d)}, raw=True)

    shell.events.register("post_run_cell", _show)


def make_excepthook(previous: Callable[..., Any], lookup: Callable[[BaseException], Diagnosis | None]) -> Callable[..., Any]:
    """A sys.excepthook for terminals: the standard traceback without the note, then the panel."""

    def gradguard_excepthook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
        diagnosis = lookup(value) if isinstance(value, BaseException) else None
        if diagnosis is None or not _stderr_is_terminal():
            previous(kind, value, tb)
            return
        sys.stderr.write("".join(format_without_note(value, tb)))
        print_panel(diagnosis)

    gradguard_excepthook.__gradguard_previous__ = previous  # type: ignore[attr-defined]
    return gradguard_excepthook


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
