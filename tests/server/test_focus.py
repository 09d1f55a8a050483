"""The server's focused check: which helpers it leaves out, that its findings are the whole file's
(rows, messages, related places, fixes), and that the worker's whole-file result replaces it."""

from __future__ import annotations

import asyncio
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gradguard.model import Diagnostic, FileError, FileResult
from gradguard.server import lsp
from gradguard.server.checks import lint_text
from gradguard.server.focus import focus

HELPERS = '''
def unused_metric(values, scale=2.0):
    """A running statistic of the losses."""
    total = 0.0
    for value in values:
        total += math.sqrt(abs(value)) * scale
    return total


def make_batch(size=4):
    return torch.randn(size, 3)

'''
# Each helper here must stay: something makes it matter to the analysis.
KEPT = '''
def scale_input(x):  # called by the training loop
    return x * 2


def doubled(x):  # called by a kept helper
    return scale_input(x) + scale_input(x)


def reads_global():  # reads a name bound at module level
    return len(history)


def calls_project(x):  # calls into a project module, which may run a backward
    return prepare(x)


def evaluates(net):  # `net.eval()` makes the screen treat `net` as a module everywhere
    net.eval()


def named_in_a_string():  # reached by getattr
    return 1


def builds_the_model():  # names a class of the file
    return Cell()


def silenced():
    return 0  # noqa: GG001


def steps(loss):  # calls backward itself
    loss.backward()


@torch.no_grad()
def decorated():
    return 0


def calls_a_kept_helper(loss):  # `steps` backward-s: analysed on its own, this one does too
    steps(loss)


if sys.platform:
    def defined_in_a_branch(loss):
        loss.backward()


def calls_a_branch_helper(loss):
    defined_in_a_branch(loss)

'''
TRAIN = '''
h = torch.zeros(1)
w = torch.randn(1, requires_grad=True)
handler = getattr(sys.modules[__name__], "named_in_a_string")
for step in range(3):
    h = scale_input(h) * w
    h.sum().backward()
'''
HEAD = '''import math
import sys

import torch

from helpers import prepare

history = []


class Cell(torch.nn.Module):
    pass

'''


def _kept_functions(source: str) -> set[str]:
    excerpt = focus(source)
    text = source if excerpt is None else excerpt.text
    return set(re.findall(r"^def (\w+)", text, re.MULTILINE))


def test_helpers_that_cannot_matter_are_left_out_and_the_others_kept() -> None:
    source = HEAD + HELPERS + KEPT + TRAIN
    assert _kept_functions(source) == {
        "scale_input", "doubled", "reads_global", "calls_project", "evaluates", "named_in_a_string",
        "builds_the_model", "silenced", "steps", "decorated", "calls_a_kept_helper", "calls_a_branch_helper",
    }
    excerpt = focus(source)
    assert excerpt is not None
    lines = source.splitlines(keepends=True)
    assert excerpt.text == "".join(lines[row - 1] for row in excerpt.rows)


def test_a_script_without_helpers_to_leave_out_is_analysed_whole() -> None:
    assert focus(HEAD + KEPT + TRAIN) is None
    assert focus("def f(:\n") is None


def test_the_focused_findings_are_the_whole_files(tmp_path: Path) -> None:
    # Helpers before and after the loop, so that rows shift on both sides of it.
    copies = [HELPERS.replace("unused_metric", f"metric_{n}").replace("make_batch", f"batch_{n}") for n in range(4)]
    source = HEAD + "".join(copies[:3]) + KEPT + TRAIN + copies[3]
    path = str(tmp_path / "train.py")
    focused, whole = lint_text(source, path, focused=True), lint_text(source, path)
    assert not focused.whole and whole.whole
    assert [d.code for d in whole.result.diagnostics] == ["GG100", "GG003"]  # GG100: `silenced`'s noqa
    assert not any(name.startswith(("metric_", "batch_")) for name in _kept_functions(source))
    assert focused.result.diagnostics == whole.result.diagnostics  # rows, messages, related places, fixes
    gg003 = focused.result.diagnostics[1]
    assert f"line {gg003.span.start.row}" in gg003.message  # the file's row, not the excerpt's
    assert focused.result.source == source


def test_a_fix_that_would_span_left_out_rows_is_dropped() -> None:
    from gradguard.engine import map_to_file_rows
    from gradguard.model import (
        Applicability,
        Diagnostic,
        Edit,
        Fix,
        Location,
        Severity,
        Span,
    )

    fix = Fix("move it", Applicability.UNSAFE, (Edit(Span.of(2, 1, 4, 1), ""),))
    found = Diagnostic("GG006", "m", Span.of(3, 5, 3, 9), Severity.ERROR, fix=fix)
    kept = map_to_file_rows(found, (1, 2, 10, 11, 12))  # rows 3-9 of the file left out
    assert kept.fix is None and kept.span.start == Location(10, 5)
    whole = map_to_file_rows(found, (1, 2, 3, 4, 5))
    assert whole.fix is not None and whole.fix.edits[0].span == Span.of(2, 1, 4, 1)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> lsp.GradguardServer:
    """A server whose worker is a thread running a stand-in for the whole-file check, publishing into a list."""
    instance = lsp.GradguardServer()
    pool = ThreadPoolExecutor(max_workers=1)
    monkeypatch.setattr(instance, "pool", lambda: pool)
    published: list[FileResult] = []
    monkeypatch.setattr(instance, "_publish", lambda uri, found, lines, result, **_: published.append(result))
    instance.published = published  # type: ignore[attr-defined]
    return instance


def _focused(text: str) -> lsp.Checked:
    return lsp.Checked(1, text, FileResult("t.py", source=text), text.splitlines(), whole=False)


def test_the_whole_file_result_is_published_only_when_it_differs(server: lsp.GradguardServer, monkeypatch: pytest.MonkeyPatch) -> None:
    other = FileResult("t.py", errors=(FileError("t.py", "found by the whole file"),))
    monkeypatch.setattr(lsp, "lint_whole", lambda text, path, overlay=(): other if "differs" in text else FileResult("t.py", source=text))
    for text, published in (("same\n", []), ("differs\n", [other])):
        server.checked["file:///t.py"] = checked = _focused(text)
        asyncio.run(server._confirm_latest("file:///t.py"))
        assert server.published == published  # type: ignore[attr-defined]
        assert checked.whole and checked.result.errors == (other.errors if published else ())
        server.published.clear()  # type: ignore[attr-defined]


def test_a_result_for_an_older_version_is_not_published(server: lsp.GradguardServer, monkeypatch: pytest.MonkeyPatch) -> None:
    uri = "file:///t.py"
    seen: list[str] = []
    release = threading.Event()

    def whole(text: str, path: str, overlay: object = ()) -> FileResult:
        seen.append(text)
        release.wait(10)
        return FileResult("t.py", source=text, skipped=True)  # `skipped` tells the worker's result apart

    monkeypatch.setattr(lsp, "lint_whole", whole)
    server.checked[uri] = _focused("first\n")

    async def edit_while_the_worker_runs() -> None:
        server._confirm(uri)
        while not seen:
            await asyncio.sleep(0.001)
        server.checked[uri] = _focused("second\n")
        server._confirm(uri)
        release.set()
        while uri in server.confirming:
            await asyncio.sleep(0.001)

    asyncio.run(edit_while_the_worker_runs())
    assert seen == ["first\n", "second\n"]
    checked = server.checked[uri]
    assert checked.text == "second\n" and checked.whole and checked.result.skipped
    assert server.published == []  # type: ignore[attr-defined]  # same findings as the focused check


def test_the_focused_check_leaves_the_fixes_to_the_whole_check(tmp_path: Path) -> None:
    source = HEAD + HELPERS + KEPT + TRAIN
    path = str(tmp_path / "train.py")
    focused, whole = lint_text(source, path, focused=True), lint_text(source, path)
    assert not focused.fixes_checked and whole.fixes_checked
    # A script with nothing to leave out is still checked again, for its fixes.
    plain = lint_text(HEAD + KEPT + TRAIN, path, focused=True)
    assert plain.whole and not plain.fixes_checked


def _actions_for(server: lsp.GradguardServer, uri: str) -> list:
    from lsprotocol import types

    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(types.Position(0, 0), types.Position(len(server.checked[uri].lines), 0)),
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix]),
    )
    return asyncio.run(lsp.code_action(server, params))  # type: ignore[arg-type]


def test_a_code_action_offers_only_checked_fixes(server: lsp.GradguardServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # The focused check's fixes are checked when a code action asks, once per version; a fix the check
    # withholds is not offered, and its finding is published again with the reason.
    from gradguard import fixcheck

    uri, text = "file:///t.py", HEAD + KEPT + TRAIN
    monkeypatch.setattr(lsp, "_path", lambda uri: "train.py")
    focused = lint_text(text, "train.py", focused=True)
    assert [d.code for d in focused.result.diagnostics] == ["GG100", "GG003"]  # GG100: `silenced`'s noqa
    assert focused.result.diagnostics[1].fix is not None
    server.checked[uri] = lsp.Checked(1, text, focused.result, text.splitlines(), whole=False, fixes_checked=False)
    checks: list[str] = []
    monkeypatch.setattr(fixcheck, "_group_problem", lambda source, *_: checks.append(source) or "a test refuses it")
    titles = [action.title for action in _actions_for(server, uri) if action.title.startswith("GG003")]
    assert titles == ["GG003: add `# noqa: GG003`"] and len(checks) == 3  # both fixes together, then each
    assert server.checked[uri].fixes_checked
    (published,) = server.published  # type: ignore[attr-defined]
    assert "the automatic fix was withheld because a test refuses it" in published.diagnostics[1].message
    _actions_for(server, uri)
    assert len(checks) == 3  # checked once for this version


def test_a_code_action_offers_the_fix_the_check_keeps(server: lsp.GradguardServer, monkeypatch: pytest.MonkeyPatch) -> None:
    uri, text = "file:///t.py", HEAD + KEPT + TRAIN
    monkeypatch.setattr(lsp, "_path", lambda uri: "train.py")
    focused = lint_text(text, "train.py", focused=True)
    server.checked[uri] = lsp.Checked(1, text, focused.result, text.splitlines(), whole=False, fixes_checked=False)
    titles = [action.title for action in _actions_for(server, uri) if action.title.startswith("GG003")]
    assert titles[0].endswith("(safe fix)") and "noqa" not in titles[0]
    assert server.published == []  # type: ignore[attr-defined]  # the check changed nothing
