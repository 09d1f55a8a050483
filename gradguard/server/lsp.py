"""The language server: pygls over stdio, one analysis per document version, results kept warm.

Each open document (or notebook) is linted on open, change and save with the settings of the nearest
configuration (`pyproject.toml` / `gradguard.toml`, walking up from the file). The last result of every
document is kept, so code actions and hover answer from it without analysing again; a change re-analyses
only the document that changed.

A script is first checked focused (its helpers that cannot matter left out, `focus.py`, and its fixes
not yet checked), which is what keeps a re-check of a long script fast; a worker process then analyses
the whole file and checks its fixes, and its result replaces the focused one (published again only if
it differs: a fix the check withholds changes its finding's message). A code action asked before that
result arrives checks the focused check's fixes first (once per version): no unchecked fix is offered.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from gradguard import __version__
from gradguard.model import Applicability, Diagnostic, FileResult, Note
from gradguard.server import convert
from gradguard.server.checks import Overlay, fix_all_safe, lint_text, lint_whole, start_worker

FIX_ALL = "source.fixAll.gradguard"
# Long enough for the changes already sent (a burst of keystrokes waiting in the pipe) to be read, so
# only the latest is analysed; short beside the check itself.
DEBOUNCE_SECONDS = 0.01


@dataclass
class Checked:
    """The last analysis of one document: its text, its result, and for a notebook its cells' URIs."""

    version: int | None
    text: str
    result: FileResult
    lines: list[str]
    cell_uris: dict[int, str] = field(default_factory=dict)  # notebook cell index (1-based) -> URI
    cell_lines: dict[int, list[str]] = field(default_factory=dict)
    fixed_all: str | None = None  # the text with every safe fix applied, computed on first request
    whole: bool = True  # False while only the focused check has run
    fixes_checked: bool = True  # False while the fixes of the focused check are not checked


def _path(uri: str) -> str:
    return to_fs_path(uri) or uri


class GradguardServer(LanguageServer):
    """A LanguageServer that remembers the last result of every document."""

    def __init__(self) -> None:
        super().__init__(
            "gradguard",
            __version__,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithCells(
                        cells=[types.NotebookCellLanguage(language="python")], notebook="jupyter-notebook"
                    )
                ]
            ),
        )
        self.checked: dict[str, Checked] = {}
        self.cell_owner: dict[str, str] = {}  # cell URI -> notebook URI
        self._pool: ProcessPoolExecutor | None = None
        # Documents whose whole-file check is running: True once a newer version waits for its own.
        self.confirming: dict[str, bool] = {}

    def overlay(self, uri: str) -> Overlay:
        """The other open Python documents as (path, text): the analysis of `uri` reads a project module
        it imports from the editor's buffer, saved or not."""
        try:
            documents = self.workspace.text_documents
        except RuntimeError:  # not initialized: no editor, no buffers
            return ()
        return tuple(sorted((os.path.abspath(_path(other)), document.source) for other, document in documents.items()
                            if other != uri and other not in self.cell_owner and _path(other).endswith(".py")))

    def check_document(self, uri: str, dependents: bool = True) -> None:
        """Lint a text document (focused) and publish its diagnostics; the whole file follows if needed.
        With `dependents`, the open documents whose last analysis read this one are checked again."""
        document = self.workspace.get_text_document(uri)
        if document.uri in self.cell_owner:
            return
        text = document.source
        check = lint_text(text, _path(uri), focused=True, overlay=self.overlay(uri))
        lines = text.splitlines()
        whole = check.whole and check.fixes_checked
        self.checked[uri] = Checked(document.version, text, check.result, lines, whole=whole,
                                    fixes_checked=check.fixes_checked)
        self._publish(uri, check.result.diagnostics, lines, check.result, version=document.version)
        if not whole:
            self._confirm(uri)
        if dependents:
            path = os.path.abspath(_path(uri))
            for other, checked in list(self.checked.items()):
                if other != uri and not checked.cell_uris and path in map(os.path.abspath, checked.result.dependencies):
                    self.check_document(other, dependents=False)

    def _confirm(self, uri: str) -> None:
        """Analyse the whole file in the worker; a newer version waits for the running one."""
        if uri in self.confirming:
            self.confirming[uri] = True
            return
        self.confirming[uri] = False
        asyncio.get_running_loop().create_task(self._confirm_latest(uri))

    async def _confirm_latest(self, uri: str) -> None:
        try:
            while True:
                self.confirming[uri] = False
                checked = self.checked.get(uri)
                if checked is None or checked.whole:
                    return
                try:
                    result = await asyncio.get_running_loop().run_in_executor(
                        self.pool(), lint_whole, checked.text, _path(uri), self.overlay(uri)
                    )
                except BrokenProcessPool:
                    self._pool = None  # killed from outside: the next check starts another
                    return
                if self.confirming.get(uri) or self.checked.get(uri) is not checked:
                    continue  # edited meanwhile: what matters is the latest version
                checked.whole = checked.fixes_checked = True
                changed = (result.diagnostics, result.errors, result.incomplete) != (
                    checked.result.diagnostics,
                    checked.result.errors,
                    checked.result.incomplete,
                )
                checked.result = result
                if changed:
                    self._publish(uri, result.diagnostics, checked.lines, result, version=checked.version)
                return
        finally:
            self.confirming.pop(uri, None)

    def pool(self) -> ProcessPoolExecutor:
        """The worker process that runs whole-file analyses and fixes (started on first use)."""
        if self._pool is None:
            import multiprocessing

            # spawn, not fork: the server runs threads (pygls reads stdin in one).
            self._pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=start_worker,
                initargs=(os.getpid(),),
            )
        return self._pool

    def stop_worker(self) -> None:
        """End the worker process (at shutdown)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def check_notebook(self, uri: str) -> None:
        """Lint a notebook (its cells in order, as Jupyter runs them) and publish per cell."""
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is None:
            return
        cells_json = []
        cell_uris: dict[int, str] = {}
        cell_lines: dict[int, list[str]] = {}
        for index, cell in enumerate(notebook.cells, start=1):
            text = self.workspace.get_text_document(cell.document).source
            code = cell.kind == types.NotebookCellKind.Code
            cells_json.append(
                {"cell_type": "code" if code else "markdown", "metadata": {}, "source": text}
                | ({"execution_count": None, "outputs": []} if code else {})
            )
            cell_uris[index] = cell.document
            cell_lines[index] = text.splitlines()
            self.cell_owner[cell.document] = uri
        document = {
            "cells": cells_json,
            "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        path = _path(uri)
        if not path.endswith(".ipynb"):
            path += ".ipynb"
        result = lint_text(json.dumps(document), path).result
        self.checked[uri] = Checked(notebook.version, "", result, [], cell_uris, cell_lines)
        for index, cell_uri in cell_uris.items():
            found = tuple(d for d in result.diagnostics if d.cell == index)
            notes = tuple(n for n in result.incomplete if (n.cell or 1) == index)
            self._publish(cell_uri, found, cell_lines[index], None, notebook=self.checked[uri], notes=notes)

    def _publish(
        self,
        uri: str,
        found: tuple[Diagnostic, ...],
        lines: list[str],
        result: FileResult | None,
        notebook: Checked | None = None,
        version: int | None = None,
        notes: tuple[Note, ...] = (),
    ) -> None:
        out = []
        for item in found:
            uris: list[str] = []
            texts: list[list[str]] = []
            if notebook is not None:
                for cell in item.related_cells:
                    cell_index = cell if cell is not None else item.cell or 0
                    uris.append(notebook.cell_uris.get(cell_index, uri))
                    texts.append(notebook.cell_lines.get(cell_index, lines))
            out.append(convert.diagnostic(item, lines, uri, uris, texts))
        if result is not None:
            out.extend(convert.error_diagnostic(e.message, e.row, e.column, lines) for e in result.errors)
            notes = result.incomplete
        out.extend(convert.note_diagnostic(note, lines) for note in notes)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=out, version=version)
        )

    def check_fixes(self, uri: str) -> None:
        """Check the fixes of a document's focused result, unless the worker's result came first (a code
        action offers no unchecked fix); published again where the check withheld one."""
        checked = self.checked.get(uri)
        if checked is None or checked.fixes_checked:
            return
        result = lint_text(checked.text, _path(uri), focused=True, check_fixes=True, overlay=self.overlay(uri)).result
        checked.fixes_checked = True
        if result.diagnostics != checked.result.diagnostics:
            checked.result = result
            self._publish(uri, result.diagnostics, checked.lines, result, version=checked.version)

    def findings(self, uri: str) -> tuple[list[Diagnostic], list[str], Checked | None]:
        """The findings of a document (a notebook cell's, for a cell URI) and its lines."""
        owner = self.cell_owner.get(uri)
        if owner is not None and owner in self.checked:
            checked = self.checked[owner]
            index = next((i for i, u in checked.cell_uris.items() if u == uri), None)
            found = [d for d in checked.result.diagnostics if d.cell == index]
            return found, checked.cell_lines.get(index or 0, []), checked
        checked = self.checked.get(uri)
        if checked is None:
            return [], [], None
        return list(checked.result.diagnostics), checked.lines, checked


server = GradguardServer()


@server.feature(types.SHUTDOWN)
def shutdown(ls: GradguardServer, params: None) -> None:
    ls.stop_worker()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: GradguardServer, params: types.DidOpenTextDocumentParams) -> None:
    # An opened buffer holds what its file holds: what the other documents were checked against.
    ls.check_document(params.text_document.uri, dependents=False)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: GradguardServer, params: types.DidChangeTextDocumentParams) -> None:
    # Typing sends a change per keystroke: analyse only the version that is still the latest once the
    # burst pauses, not every intermediate one.
    uri, version = params.text_document.uri, params.text_document.version
    await asyncio.sleep(DEBOUNCE_SECONDS)
    if ls.workspace.get_text_document(uri).version == version:
        ls.check_document(uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: GradguardServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.check_document(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: GradguardServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.checked.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_open(ls: GradguardServer, params: types.DidOpenNotebookDocumentParams) -> None:
    ls.check_notebook(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_change(ls: GradguardServer, params: types.DidChangeNotebookDocumentParams) -> None:
    ls.check_notebook(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_save(ls: GradguardServer, params: types.DidSaveNotebookDocumentParams) -> None:
    ls.check_notebook(params.notebook_document.uri)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL]
    ),
)
async def code_action(ls: GradguardServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """A quick fix per fix (labelled safe or unsafe), `# noqa` per finding, and "fix all safe"."""
    from gradguard.noqa import with_codes_added

    uri = params.text_document.uri
    ls.check_fixes(uri)
    found, lines, checked = ls.findings(uri)
    wanted = params.context.only
    actions: list[types.CodeAction] = []
    first, last = params.range.start.line + 1, params.range.end.line + 1
    for item in found:
        if not (item.span.start.row <= last and item.span.end.row >= first):
            continue
        lsp_diagnostic = convert.diagnostic(item, lines, uri)
        if item.fix is not None:
            safe = item.fix.applicability is Applicability.SAFE
            actions.append(
                types.CodeAction(
                    title=f"{item.code}: {item.fix.message} ({'safe' if safe else 'unsafe'} fix)",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diagnostic],
                    is_preferred=safe,
                    edit=types.WorkspaceEdit(changes=_fix_changes(ls, item, uri, lines)),
                )
            )
        row = item.span.start.row
        line = lines[row - 1] if 1 <= row <= len(lines) else None
        new = with_codes_added(line, [item.code]) if line is not None else None
        if new is not None and new != line:
            edit = types.TextEdit(
                range=types.Range(types.Position(row - 1, 0), types.Position(row - 1, len(line.encode("utf-16-le")) // 2)),  # type: ignore[union-attr]
                new_text=new,
            )
            actions.append(
                types.CodeAction(
                    title=f"{item.code}: add `# noqa: {item.code}`",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diagnostic],
                    edit=types.WorkspaceEdit(changes={uri: [edit]}),
                )
            )
    wants_source = not wanted or any(str(kind).startswith("source") for kind in wanted)
    if wants_source and checked is not None and not checked.cell_uris and any(
        d.fix is not None and d.fix.applicability is Applicability.SAFE for d in found
    ):
        if checked.fixed_all is None:
            # Fixing runs the analysis round after round: in the worker, so the server stays responsive.
            fixed_all = await asyncio.get_running_loop().run_in_executor(
                ls.pool(), fix_all_safe, checked.text, _path(uri), ls.overlay(uri)
            )
            checked.fixed_all = fixed_all or checked.text
        fixed = checked.fixed_all
        if fixed != checked.text:
            end = types.Position(len(lines), 0)
            actions.append(
                types.CodeAction(
                    title="gradguard: fix all safe fixes",
                    kind=FIX_ALL,
                    edit=types.WorkspaceEdit(
                        changes={uri: [types.TextEdit(types.Range(types.Position(0, 0), end), fixed)]}
                    ),
                )
            )
    if wanted:
        actions = [a for a in actions if a.kind is not None and any(str(a.kind).startswith(str(k)) for k in wanted)]
    return actions


def _fix_changes(ls: GradguardServer, item: Diagnostic, uri: str,
                 lines: Sequence[str]) -> dict[str, list[types.TextEdit]]:
    """A fix's edits by document: this one's, and those of the project module where the cause sits
    (its text as the analysis read it: the editor's buffer when it is open, else the file)."""
    changes: dict[str, list[types.TextEdit]] = {}
    assert item.fix is not None
    buffers = dict(ls.overlay(uri))
    for edit in item.fix.edits:
        if edit.path is None:
            changes.setdefault(uri, []).append(convert.text_edit(edit, lines))
            continue
        other = os.path.abspath(edit.path)
        if other in buffers:
            other_lines = buffers[other].splitlines()
        else:
            try:
                with open(other, "rb") as handle:
                    other_lines = handle.read().decode("utf-8-sig").splitlines()
            except (OSError, UnicodeDecodeError):
                return {}
        changes.setdefault(Path(other).as_uri(), []).append(convert.text_edit(edit, other_lines))
    return changes


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: GradguardServer, params: types.HoverParams) -> types.Hover | None:
    """The rule's document, on a finding or on a code written in a `# noqa` comment."""
    import re

    from gradguard.report._common import display_body, rule_doc

    found, lines, _ = ls.findings(params.text_document.uri)
    row = params.position.line + 1
    code = None
    line = lines[row - 1] if 1 <= row <= len(lines) else ""
    column = convert.to_location(params.position, lines).column
    for match in re.finditer(r"GG\d{3}", line):
        if match.start() < column <= match.end() + 1:
            code = match.group()
    if code is None:
        for item in found:
            if item.span.start.row <= row <= item.span.end.row:
                code = item.code
                break
    doc = rule_doc(code) if code else None
    if doc is None:
        return None
    header = f"**{doc.code} {doc.name}**: {doc.summary}\n\n[Document]({doc.url})\n\n"
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=header + display_body(doc)))


def serve() -> None:
    """Run the server on stdin/stdout until the client says exit."""
    try:
        server.start_io()
    finally:
        server.stop_worker()
