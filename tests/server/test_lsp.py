"""`gradguard server` end to end: a real LSP client over stdio (initialize, didOpen/didChange,
publishDiagnostics with related information, code actions whose edits fix the file, hover, notebooks,
settings from the nearest pyproject.toml)."""

from __future__ import annotations

from pathlib import Path

from lsp_client import Client, run
from lsprotocol import types

from gradguard.model import Edit, Span
from gradguard.report._common import apply_edits

GG003_SOURCE = """\
import torch

h = torch.zeros(1)
w = torch.randn(1, requires_grad=True)
for step in range(3):
    h = h * w
    h.sum().backward()
"""
GG001_SOURCE = """\
import torch

w = torch.randn(3, requires_grad=True)
label = "日本語𝜃"; loss = (w * 2).sum()
loss.backward()
loss.backward()
"""


def _open(client: Client, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    """LSP edits applied to a text (UTF-16 columns; the samples' edited lines are ASCII)."""
    return apply_edits(
        text,
        [
            Edit(Span.of(e.range.start.line + 1, e.range.start.character + 1, e.range.end.line + 1, e.range.end.character + 1), e.new_text)
            for e in edits
        ],
    )


def test_diagnostics_related_information_quick_fix_and_fix_all(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(GG003_SOURCE, encoding="utf-8")
    uri = path.as_uri()

    async def body(client: Client) -> None:
        _open(client, uri, GG003_SOURCE)
        (found,) = await client.wait_for(uri)
        assert (found.code, found.source, found.severity) == ("GG003", "gradguard", types.DiagnosticSeverity.Error)
        assert found.range.start == types.Position(line=6, character=4)
        assert found.code_description is not None and found.code_description.href.endswith("/GG003")
        assert found.related_information, "the freeing call and the carrier's assignment"
        assert all(info.location.uri == uri for info in found.related_information)
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=found.range,
                context=types.CodeActionContext(diagnostics=[found]),
            )
        )
        titles = [a.title for a in actions]
        quick = next(a for a in actions if "(safe fix)" in a.title)
        assert quick.kind == types.CodeActionKind.QuickFix and quick.is_preferred
        fixed = _apply(GG003_SOURCE, quick.edit.changes[uri])
        assert "    h = h.detach()\n    h = h * w\n" in fixed
        noqa = next(a for a in actions if "noqa" in a.title)
        assert _apply(GG003_SOURCE, noqa.edit.changes[uri]).splitlines()[6] == "    h.sum().backward()  # noqa: GG003"
        fix_all = next(a for a in actions if a.kind == "source.fixAll.gradguard")
        assert _apply(GG003_SOURCE, fix_all.edit.changes[uri]) == fixed, titles
        # The edited text is analysed again: the fixed document is clean.
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
            )
        )
        assert list(await client.wait_for(uri)) == []

    run(tmp_path, body)


def test_unsafe_fix_is_labelled_and_columns_are_utf16(tmp_path: Path) -> None:
    path = tmp_path / "double.py"
    uri = path.as_uri()

    async def body(client: Client) -> None:
        _open(client, uri, GG001_SOURCE)
        (found,) = await client.wait_for(uri)
        assert found.code == "GG001" and found.range.start.line == 5
        (freed,) = [i for i in found.related_information or [] if "freed" in i.message]
        assert freed.location.range.start.line == 4
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=found.range,
                context=types.CodeActionContext(diagnostics=[found]),
            )
        )
        assert any(a.title.endswith("(unsafe fix)") and not a.is_preferred for a in actions)
        assert not any(a.kind == "source.fixAll.gradguard" for a in actions)
        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(5, 3))
        )
        assert hover is not None and "GG001 repeated-backward" in hover.contents.value
        assert "## What it does" in hover.contents.value

    run(tmp_path, body)


def test_settings_come_from_the_nearest_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "pyproject.toml").write_text("[tool.gradguard]\nignore = ['GG003']\n", encoding="utf-8")
    ignored = (tmp_path / "pkg" / "train.py").as_uri()
    linted = (tmp_path / "train.py").as_uri()

    async def body(client: Client) -> None:
        _open(client, ignored, GG003_SOURCE)
        assert list(await client.wait_for(ignored)) == []
        _open(client, linted, GG003_SOURCE)
        assert [d.code for d in await client.wait_for(linted)] == ["GG003"]
        broken = (tmp_path / "broken.py").as_uri()
        _open(client, broken, "def f(:\n")
        (error,) = await client.wait_for(broken)
        assert "syntax error" in error.message and error.range.start.line == 0

    run(tmp_path, body)


def test_a_save_checks_again_with_the_settings_of_that_moment(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_text(GG003_SOURCE, encoding="utf-8")
    uri = path.as_uri()

    async def body(client: Client) -> None:
        _open(client, uri, GG003_SOURCE)
        assert [d.code for d in await client.wait_for(uri)] == ["GG003"]
        (tmp_path / "pyproject.toml").write_text("[tool.gradguard]\nignore = ['GG003']\n", encoding="utf-8")
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert list(await client.wait_for(uri)) == []

    run(tmp_path, body)


def test_notebook_cells_get_their_own_diagnostics(tmp_path: Path) -> None:
    notebook_uri = (tmp_path / "explore.ipynb").as_uri()
    cells = ["import torch\nh = torch.zeros(1)\nw = torch.randn(1, requires_grad=True)\n", "# notes", "for step in range(3):\n    h = h * w\n    h.sum().backward()\n"]
    kinds = [types.NotebookCellKind.Code, types.NotebookCellKind.Markup, types.NotebookCellKind.Code]
    cell_uris = [f"vscode-notebook-cell:{tmp_path}/explore.ipynb#c{i}" for i in range(3)]

    async def body(client: Client) -> None:
        client.notebook_document_did_open(
            types.DidOpenNotebookDocumentParams(
                notebook_document=types.NotebookDocument(
                    uri=notebook_uri,
                    notebook_type="jupyter-notebook",
                    version=1,
                    cells=[types.NotebookCell(kind=k, document=u) for k, u in zip(kinds, cell_uris, strict=True)],
                ),
                cell_text_documents=[
                    types.TextDocumentItem(uri=u, language_id="python" if k == types.NotebookCellKind.Code else "markdown", version=1, text=t)
                    for u, k, t in zip(cell_uris, kinds, cells, strict=True)
                ],
            )
        )
        found = {}
        while len(found) < 3:
            uri = await client.published.get()
            found[uri] = client.diagnostics[uri]
        assert list(found[cell_uris[0]]) == [] and list(found[cell_uris[1]]) == []
        (diagnostic,) = found[cell_uris[2]]
        assert diagnostic.code == "GG003" and diagnostic.range.start.line == 2
        assert "cell 3" in diagnostic.message or diagnostic.related_information
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=cell_uris[2]),
                range=diagnostic.range,
                context=types.CodeActionContext(diagnostics=[diagnostic]),
            )
        )
        quick = next(a for a in actions if "(safe fix)" in a.title)
        assert list(quick.edit.changes) == [cell_uris[2]]
        fixed = _apply(cells[2], quick.edit.changes[cell_uris[2]])
        assert "h = h.detach()" in fixed
        # The fixed cell, sent as a notebook change, leaves the notebook clean.
        client.notebook_document_did_change(
            types.DidChangeNotebookDocumentParams(
                notebook_document=types.VersionedNotebookDocumentIdentifier(uri=notebook_uri, version=2),
                change=types.NotebookDocumentChangeEvent(
                    cells=types.NotebookDocumentCellChanges(
                        text_content=[
                            types.NotebookDocumentCellContentChanges(
                                document=types.VersionedTextDocumentIdentifier(uri=cell_uris[2], version=2),
                                changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
                            )
                        ]
                    )
                ),
            )
        )
        assert list(await client.wait_for(cell_uris[2])) == []

    run(tmp_path, body)


def test_a_burst_of_changes_ends_with_the_diagnostics_of_the_last_version(tmp_path: Path) -> None:
    uri = (tmp_path / "train.py").as_uri()
    clean = GG003_SOURCE.replace("    h = h * w\n", "    h = h.detach() * w\n")

    async def body(client: Client) -> None:
        _open(client, uri, clean)
        assert list(await client.wait_for(uri)) == []
        versions = []
        for version in range(2, 7):
            text = GG003_SOURCE if version == 6 else clean + f"# edit {version}\n"
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )
        while True:
            found = await client.wait_for(uri)
            versions.append(client.versions[uri])
            if client.versions[uri] == 6:
                break
        assert [d.code for d in found] == ["GG003"]
        assert len(versions) < 5, versions  # the intermediate versions were not all analysed

    run(tmp_path, body)


PROBE_HELPER = """\
import torch


def input_sensitivity(outputs, inputs):
    (grads,) = torch.autograd.grad(outputs.sum(), inputs)
    return grads.norm().item()
"""
PROBED_SCRIPT = """\
import torch
import torch.nn as nn

from probes import input_sensitivity

model = nn.Linear(8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(4, 8, requires_grad=True)
    logits = model(x)
    loss = logits.pow(2).mean()
    if step % 5 == 0:
        print(input_sensitivity(logits, x))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_quick_fix_edits_the_helper_module_where_the_cause_sits(tmp_path: Path) -> None:
    helper = tmp_path / "probes.py"
    helper.write_text(PROBE_HELPER, encoding="utf-8")
    path = tmp_path / "train.py"
    path.write_text(PROBED_SCRIPT, encoding="utf-8")
    uri = path.as_uri()

    async def body(client: Client) -> None:
        _open(client, uri, PROBED_SCRIPT)
        (found,) = await client.wait_for(uri)
        assert found.code == "GG007"
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=found.range,
                context=types.CodeActionContext(diagnostics=[found]),
            )
        )
        quick = next(a for a in actions if a.title.endswith("(unsafe fix)"))
        assert list(quick.edit.changes) == [helper.as_uri()]
        fixed = _apply(PROBE_HELPER, quick.edit.changes[helper.as_uri()])
        assert "torch.autograd.grad(outputs.sum(), inputs, retain_graph=True)" in fixed

    run(tmp_path, body)


def test_an_unsaved_edit_of_an_imported_module_is_what_the_script_is_checked_against(tmp_path: Path) -> None:
    helper = tmp_path / "probes.py"
    helper.write_text(PROBE_HELPER, encoding="utf-8")
    path = tmp_path / "train.py"
    path.write_text(PROBED_SCRIPT, encoding="utf-8")
    uri, helper_uri = path.as_uri(), helper.as_uri()
    retained = PROBE_HELPER.replace("inputs)\n", "inputs, retain_graph=True)\n")
    shifted = "# probes of a model's sensitivity\n# (unsaved)\n" + PROBE_HELPER

    def change(text: str, version: int) -> None:
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=helper_uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def body(session_client: Client) -> None:
        nonlocal client
        client = session_client
        _open(client, uri, PROBED_SCRIPT)
        assert [d.code for d in await client.wait_for(uri)] == ["GG007"]
        _open(client, helper_uri, PROBE_HELPER)
        await client.wait_for(helper_uri)
        # The helper fixed in the editor, not saved: the script that imports it is checked again.
        change(retained, 2)
        assert list(await client.wait_for(uri)) == []
        # Back to the bug, two lines lower in the buffer: the quick fix edits the buffer's rows.
        change(shifted, 3)
        (found,) = await client.wait_for(uri)
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=found.range,
                context=types.CodeActionContext(diagnostics=[found]),
            )
        )
        quick = next(a for a in actions if a.title.endswith("(unsafe fix)"))
        fixed = _apply(shifted, quick.edit.changes[helper_uri])
        assert fixed.startswith("# probes") and "inputs, retain_graph=True)" in fixed
        assert helper.read_text(encoding="utf-8") == PROBE_HELPER  # nothing was saved

    client: Client
    run(tmp_path, body)
