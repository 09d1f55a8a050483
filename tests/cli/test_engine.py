"""The engine's own mechanics: decoding, `# noqa`, settings filtering and notebook row mapping.

The noqa and mapping tests replace `gradguard.analysis.analyze` with a stand-in that reports fixed
places, so they test the engine alone; the end-to-end tests use the real analysis.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from gradguard import analysis
from gradguard.config import Settings
from gradguard.engine import InputError, check_path, check_source, decode, prepare
from gradguard.model import (
    Applicability,
    Diagnostic,
    Edit,
    Fix,
    Related,
    Severity,
    Span,
)
from gradguard.notebook import parse_notebook, python_lines

SETTINGS = Settings(root=Path("/"))


def _report_rows(monkeypatch: pytest.MonkeyPatch, *places: tuple[str, int]) -> None:
    """Make the analysis report `code` at each `row` (column 1 to 5), with a related place and a fix."""

    def fake(source: str, describe_row: object = None, path: str | None = None) -> analysis.Analysis:
        return analysis.Analysis(tuple(
            Diagnostic(
                code=code,
                message=f"{code} at {row}",
                span=Span.of(row, 1, row, 5),
                severity=Severity.ERROR,
                related=(Related(Span.of(row - 1, 1, row - 1, 2), "graph freed here"),),
                fix=Fix("do it", Applicability.SAFE, (Edit(Span.of(row, 1, row, 1), "# "),)),
            )
            for code, row in places
        ))

    monkeypatch.setattr(analysis, "analyze_file", fake)


# Decoding


def test_utf8_bom_and_coding_cookie() -> None:
    assert decode(codecs.BOM_UTF8 + "x = 'é'\n".encode(), "a.py") == ("x = 'é'\n", "utf-8-sig")
    latin = "# -*- coding: latin-1 -*-\nname = 'café'\n".encode("latin-1")
    assert decode(latin, "a.py") == ("# -*- coding: latin-1 -*-\nname = 'café'\n", "iso8859-1")
    second_line = "#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\ns = '€'\n".encode("cp1252")
    assert decode(second_line, "a.py")[1] == "cp1252"


def test_not_utf8_without_cookie_names_the_line() -> None:
    with pytest.raises(InputError) as info:
        decode("x = 1\ny = 'café'\n".encode("latin-1"), "a.py")
    error = info.value.error
    assert "not UTF-8 and no coding cookie" in error.message
    assert (error.row, error.column) == (2, 9)


def test_binary_and_bad_cookie() -> None:
    with pytest.raises(InputError, match="binary file"):
        decode(b"\x7fELF\x02\x01\x01\x00\x00backward", "a.py")
    with pytest.raises(InputError, match="unknown encoding 'klingon'"):
        decode(b"# coding: klingon\nx = 1\n", "a.py")


def test_cookie_below_code_is_ignored() -> None:
    with pytest.raises(InputError, match="not UTF-8"):
        decode(b"x = 1\n# coding: latin-1\ny = '\xe9'\n", "a.py")


# Suppression comments


def test_noqa_with_codes_and_bare(monkeypatch: pytest.MonkeyPatch) -> None:
    _report_rows(monkeypatch, ("GG001", 2), ("GG003", 3), ("GG001", 4), ("GG001", 5), ("GG002", 6))
    source = (
        "a = 1\n"
        "loss.backward()  # noqa: GG001\n"
        "h.backward()  # noqa: GG001,GG003\n"
        "loss.backward()  # noqa: E501\n"
        "loss.backward()  # NOQA\n"
        "loss.backward()  # noqa:GG002 keep this one quiet\n"
    )
    result = check_source(source, "a.py", SETTINGS)
    assert [(d.code, d.span.start.row) for d in result.diagnostics] == [("GG001", 4)]


def test_noqa_only_counts_on_the_flagged_row(monkeypatch: pytest.MonkeyPatch) -> None:
    _report_rows(monkeypatch, ("GG001", 3))
    source = "total = (a  # noqa: GG001\n    + b)\ntotal.backward(\n    x,\n)\n"
    assert [d.span.start.row for d in check_source(source, "a.py", SETTINGS).diagnostics] == [3]
    source = "total = (a\n    + b)\ntotal.backward(  # noqa: GG001\n    x,\n)\n"
    assert check_source(source, "a.py", SETTINGS).diagnostics == ()


def test_settings_filter_by_code_and_path(monkeypatch: pytest.MonkeyPatch) -> None:
    _report_rows(monkeypatch, ("GG001", 1), ("GG002", 1))
    settings = Settings(root=Path("/proj"), ignore=("GG002",), per_file_ignores=(("tests/", ("GG001",)),))
    source = "loss.backward()\n"
    assert [d.code for d in check_source(source, "/proj/train.py", settings).diagnostics] == ["GG001"]
    assert check_source(source, "/proj/tests/t.py", settings).diagnostics == ()


def test_prefilter_skips_without_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(source: str, describe_row: object = None, path: str | None = None) -> analysis.Analysis:
        raise AssertionError("a file without backward/grad must not be analysed")

    monkeypatch.setattr(analysis, "analyze_file", explode)
    result = check_source("def f(x):\n    return x + 1\n", "a.py", SETTINGS)
    assert result.skipped and result.diagnostics == () and result.errors == ()


MMENGINE_TRAIN = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from mmengine.optim import OptimWrapper


class CharRNN(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, state):
        out, state = self.gru(self.embed(tokens), state)
        return self.head(out), state


text = torch.randint(0, 20, (4, 101))
model = CharRNN(20, 16)
optim_wrapper = OptimWrapper(torch.optim.Adam(model.parameters(), lr=1e-3))
state = torch.zeros(1, 4, 16)
for start in range(0, 100, 10):
    tokens, targets = text[:, start:start + 10], text[:, start + 1:start + 11]
    logits, state = model(tokens, state)
    loss = F.cross_entropy(logits.reshape(-1, 20), targets.reshape(-1))
    optim_wrapper.update_params(loss)
"""


def test_the_prefilter_lets_through_every_backward_the_facts_know() -> None:
    """mmengine's `optim_wrapper.update_params(loss)` runs backward, step and zero_grad; a file whose
    only backward is that call is analysed (the prefilter's words are the facts' backward methods)."""
    from gradguard.analysis import api, might_hold_finding

    for method in api.backward_methods():
        assert might_hold_finding(f"x.{method}(loss)\n"), method
    assert not might_hold_finding("def f(x):\n    return x.update(1)  # backward compatible\n")
    result = check_source(MMENGINE_TRAIN, "train.py", SETTINGS)
    assert [(d.code, d.span.start.row) for d in result.diagnostics] == [("GG003", 27)]


def test_analysis_crash_is_a_file_error_not_an_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(source: str, describe_row: object = None, path: str | None = None) -> analysis.Analysis:
        raise KeyError("unexpected node")

    monkeypatch.setattr(analysis, "analyze_file", crash)
    result = check_source("loss.backward()\n", "a.py", SETTINGS)
    assert len(result.errors) == 1
    message = result.errors[0].message
    assert message.startswith("internal error while analysing this file, please report it")
    assert "KeyError" in message and "unexpected node" in message


# Notebooks


def _notebook(*cells: tuple[str, str], language: str = "python") -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True)}
                | ({"outputs": [], "execution_count": None} if kind == "code" else {})
                for kind, source in cells
            ],
            "metadata": {"kernelspec": {"name": "k", "language": language, "display_name": "K"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


def test_notebook_program_blanks_ipython_syntax_and_keeps_rows() -> None:
    text = _notebook(
        ("markdown", "# Title\n"),
        ("code", "%matplotlib inline\nimport torch\n!pip install x\nfiles = !ls\n"),
        ("code", "%%bash\necho hi\nloss.backward()\n"),
        ("code", "%%time\nfor i in range(2):\n    !echo $i\n    y = i\n"),
        ("raw", "loss.backward()\n"),
        ("code", "x = (1\n     != 2)\nz = 10 %3\ntorch.randn?\n"),
    )
    notebook = parse_notebook(text)
    assert notebook.program == (
        "pass\nimport torch\npass\nfiles = None\n"
        "\n\n\n"
        "\nfor i in range(2):\n    pass\n    y = i\n"
        "x = (1\n     != 2)\nz = 10 %3\npass\n"
    )
    assert [cell for cell, _ in notebook.cells] == [2, 3, 4, 6]
    assert notebook.locate(2) == (2, 2)
    assert notebook.locate(11) == (4, 4)
    assert notebook.locate(12) == (6, 1)


def test_a_magic_with_blanks_after_its_percent_sign_is_blanked() -> None:
    # moskomule/ewc.pytorch's demo.ipynb starts with `% matplotlib inline`, which IPython runs.
    assert python_lines("% matplotlib inline\nimport torch\n  %  time x = 1\n") == [
        "pass\n", "import torch\n", "  pass\n"]


def test_an_indented_shell_line_that_starts_its_cell_is_blanked_at_the_margin() -> None:
    # jdtoscano94's PINN tutorials start with a cell ` ! pip install pyDOE`: IPython strips the first
    # line's indentation from the cell's lines, so it runs.
    assert python_lines(" ! pip install pyDOE\n") == ["pass\n"]
    assert python_lines("  %matplotlib inline\n  !ls\nimport torch\n") == ["pass\n", "pass\n", "import torch\n"]
    assert python_lines("for i in range(2):\n    !echo $i\n") == ["for i in range(2):\n", "    pass\n"]


def test_line_continuation_of_a_magic_is_blanked() -> None:
    assert python_lines("!echo a \\\n  b\nx = 1\n") == ["pass\n", "\n", "x = 1\n"]


def test_non_python_kernel_gives_an_empty_program() -> None:
    notebook = parse_notebook(_notebook(("code", "x <- 1\n"), language="R"))
    assert not notebook.is_python and notebook.program == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"cells": [', "malformed notebook JSON"),
        ("[]", "no 'cells' list"),
        ('{"metadata": {}}', "no 'cells' list"),
    ],
)
def test_malformed_notebooks(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        prepare(text.encode(), "nb.ipynb")


def test_notebook_diagnostics_are_mapped_to_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    # Program rows: cell 2 -> 1..2, cell 4 -> 3..5.
    _report_rows(monkeypatch, ("GG001", 4), ("GG001", 5))
    text = _notebook(
        ("markdown", "intro\n"),
        ("code", "import torch\nloss = f()\n"),
        ("markdown", "more\n"),
        ("code", "loss.backward()\nloss.backward()\nloss.backward()  # noqa: GG001\n"),
    )
    result = check_source(text, "nb.ipynb", SETTINGS)
    assert [(d.cell, d.span.start.row) for d in result.diagnostics] == [(4, 2)]
    diagnostic = result.diagnostics[0]
    assert diagnostic.related_cells == (4,)
    assert diagnostic.related[0].span.start.row == 1
    assert diagnostic.fix is not None and diagnostic.fix.edits[0].span.start.row == 2
    assert [cell for cell, _ in result.cells] == [2, 4]


def test_related_place_in_an_earlier_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    _report_rows(monkeypatch, ("GG001", 3))
    text = _notebook(("code", "import torch\nloss.backward()\n"), ("code", "loss.backward()\n"))
    (diagnostic,) = check_source(text, "nb.ipynb", SETTINGS).diagnostics
    assert (diagnostic.cell, diagnostic.span.start.row) == (2, 1)
    assert diagnostic.related_cells == (1,)
    assert diagnostic.related[0].span.start.row == 2


def test_check_path_reports_missing_and_special_files(tmp_path: Path) -> None:
    assert (
        check_path(str(tmp_path / "nope.py"), SETTINGS).errors[0].message
        == "cannot read: no such file or directory"
    )
    assert (
        check_path(str(tmp_path), SETTINGS).errors[0].message == "not a regular file (a folder), not linted"
    )


def test_a_notebook_cell_that_does_not_parse_is_reported_and_the_rest_analysed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []
    real = analysis.analyze_file

    def spy(source: str, describe_row: object = None, path: str | None = None) -> analysis.Analysis:
        seen.append(source)
        return real(source, describe_row, path)  # type: ignore[arg-type]

    monkeypatch.setattr(analysis, "analyze_file", spy)
    text = _notebook(
        ("code", "import torch\nw = torch.ones(2, requires_grad=True)\n"),
        ("code", "def broken(:\n    loss.backward()\n"),
        ("code", "loss = (w * 2).sum()\nloss.backward()\n"),
    )
    result = check_source(text, "nb.ipynb", SETTINGS)
    assert [error.message for error in result.errors] == [
        "cell 2, line 1, column 12: syntax error: invalid syntax"
    ]
    assert seen[-1].splitlines()[2:4] == ["", ""]
    assert "loss.backward()" in seen[-1].splitlines()[5]
