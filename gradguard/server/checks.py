"""Linting an editor's document for the language server; free of pygls, so a worker process can run it.

`lint_text(..., focused=True)` is the fast check run at each edit: a script's helpers that cannot
matter are blanked first (`focus.py`), and its fixes are offered unchecked (checking them re-analyses the
fixed text, most of a check's cost); the server checks them when a code action asks for them
(`check_fixes=True`). `lint_text(...)` analyses the whole file and checks its fixes, as `gradguard lint`
does; the server runs it in a worker process after a focused check.
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from dataclasses import dataclass, replace

from gradguard.model import FileError, FileResult


@dataclass(frozen=True)
class Check:
    """One analysis of a document: its result, and whether the whole file was analysed."""

    result: FileResult
    whole: bool
    # False when the fixes are offered unchecked (the focused check): some may be withheld once checked,
    # which changes their findings' messages too.
    fixes_checked: bool = True


Overlay = tuple[tuple[str, str], ...]


def lint_text(text: str, path: str, *, focused: bool = False, check_fixes: bool | None = None,
              overlay: Overlay = ()) -> Check:
    """Lint a document's text with the settings that apply to `path` (its syntax checked even when skipped).

    `check_fixes`: whether the fixes are checked (a fix the check shows wrong is withheld); by default
    not in a focused check, always otherwise. `overlay`: (path, text) of the editor's other open
    documents, which the analysis reads instead of the files on disk (a module imported by this one,
    edited and not saved)."""
    from gradguard.analysis.project import overlaid

    with overlaid(overlay):
        return _lint_text(text, path, focused, not focused if check_fixes is None else check_fixes)


def _lint_text(text: str, path: str, focused: bool, check_fixes: bool) -> Check:
    from gradguard import engine
    from gradguard.config import ConfigError, Resolver

    try:
        settings = Resolver(os.path.dirname(os.path.abspath(path))).for_file(path)
    except ConfigError as exc:
        return Check(FileResult(path, errors=(FileError(path, f"configuration: {exc}"),)), True)
    try:
        prepared = engine.prepare(text.encode("utf-8", "surrogatepass"), path)
    except engine.InputError as exc:
        return Check(FileResult(path, errors=(exc.error,), source=text), True)
    selection = settings.selection(path)
    if engine.screen(prepared, declared=selection.api) is not None:
        error = engine.syntax_error(prepared)
        return Check(FileResult(path, errors=(error,) if error else (), source=prepared.program), True)
    # A notebook's program, and declared helpers the focus cannot see the calls of, are analysed whole.
    if focused and prepared.notebook is None and not selection.api:
        from gradguard.fixcheck import unchecked
        from gradguard.server.focus import focus

        excerpt = focus(prepared.source)
        with nullcontext() if check_fixes else unchecked():
            if excerpt is None:
                return Check(engine.analyse(prepared, selection), True, fixes_checked=check_fixes)
            result = engine.analyse(replace(prepared, source=excerpt.text, rows=excerpt.rows), selection)
        return Check(replace(result, source=prepared.source), False, fixes_checked=check_fixes)
    return Check(engine.analyse(prepared, selection), True)


def lint_whole(text: str, path: str, overlay: Overlay = ()) -> FileResult:
    """The whole file's result (what `gradguard lint` reports), for the server's worker process."""
    return lint_text(text, path, overlay=overlay).result


def fix_all_safe(text: str, path: str, overlay: Overlay = ()) -> str | None:
    """The text with every safe fix applied (to a fixed point), or None when none applies."""
    from gradguard import engine
    from gradguard.analysis.project import overlaid
    from gradguard.config import ConfigError, Resolver
    from gradguard.fixes import fix_prepared

    try:
        settings = Resolver(os.path.dirname(os.path.abspath(path))).for_file(path)
        with overlaid(overlay):
            fixed, _, count, note = fix_prepared(engine.Prepared(path, text, "utf-8"), settings.selection(path),
                                                 unsafe=False)
    except (ConfigError, engine.InputError):
        return None
    return fixed.source if count and note is None else None


def start_worker(parent: int) -> None:
    """The worker's first act: it dies with the server, however the server ends."""
    from gradguard.runner import die_with_parent

    die_with_parent(parent)
