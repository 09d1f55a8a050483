"""`--fix`, `--unsafe-fixes`, `--diff`: edits applied without overlap, round after round, written
atomically with the file's permissions, encoding, BOM and line endings kept."""

from __future__ import annotations

import codecs
import json
import os
import stat
from pathlib import Path

import pytest
from cli_support import GG001_ROW, GG001_SOURCE, Project

from gradguard.engine import InputError, Prepared, prepare
from gradguard.fixes import (
    digest,
    encode,
    fix_notebook_round,
    fix_text_round,
    write_atomic,
)
from gradguard.model import Applicability, Edit, Fix, Span


def _fix(*edits: tuple[int, int, int, int, str]) -> Fix:
    return Fix(
        "fix", Applicability.SAFE, tuple(Edit(Span.of(a, b, c, d), text) for a, b, c, d, text in edits)
    )


# The mechanics, on hand-made fixes.


def test_edits_keep_crlf_and_a_later_overlapping_fix_waits() -> None:
    text = "a = 1\r\nb = 2\r\nc = 3\r\n"
    first = _fix((2, 1, 2, 6, "b = 20\nb2 = 0"))
    overlapping = _fix((2, 5, 2, 6, "99"))
    elsewhere = _fix((3, 5, 3, 6, "30"))
    new, applied = fix_text_round(text, [first, overlapping, elsewhere])
    assert applied == 2
    assert new == "a = 1\r\nb = 20\r\nb2 = 0\r\nc = 30\r\n"


def test_same_point_insertions_conflict_and_edits_outside_the_text_are_skipped() -> None:
    text = "x = f(a)\n"
    new, applied = fix_text_round(
        text, [_fix((1, 8, 1, 8, ".detach()")), _fix((1, 8, 1, 8, ".item()")), _fix((5, 1, 5, 2, "?"))]
    )
    assert (new, applied) == ("x = f(a.detach())\n", 1)


def test_columns_count_characters_not_bytes() -> None:
    text = "s = 'é'; loss.backward()\n"
    new, _ = fix_text_round(text, [_fix((1, 24, 1, 24, "retain_graph=True"))])
    assert new == "s = 'é'; loss.backward(retain_graph=True)\n"


def test_notebook_edits_go_to_their_cells() -> None:
    document = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# title\n"]},
            {
                "cell_type": "code",
                "metadata": {},
                "outputs": [],
                "execution_count": 1,
                "source": ["%time x = 1\n", "h = f(h)\n"],
            },
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 2, "source": "y = g(h)"},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    prepared = prepare(json.dumps(document, indent=1).encode(), "nb.ipynb")
    # Program rows: 1 `pass` (the magic), 2 `h = f(h)`, 3 `y = g(h)`.
    sources, applied = fix_notebook_round(
        prepared, [_fix((2, 8, 2, 8, ".detach()"), (3, 8, 3, 8, ".detach()"))]
    )
    assert applied == 1
    assert sources == {2: "%time x = 1\nh = f(h.detach())\n", 3: "y = g(h.detach())"}


def test_write_atomic_keeps_mode_and_refuses_a_file_changed_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "run.py"
    original = codecs.BOM_UTF8 + b"x = 1\r\n"
    path.write_bytes(original)
    path.chmod(0o751)
    prepared = prepare(original, str(path))
    changed = Prepared(prepared.path, prepared.source.replace("1", "2"), prepared.encoding)
    write_atomic(str(path), encode(changed), digest(original))
    assert path.read_bytes() == codecs.BOM_UTF8 + b"x = 2\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    with pytest.raises(InputError, match="changed on disk"):
        write_atomic(str(path), b"x = 3\n", digest(original))
    assert path.read_bytes() == codecs.BOM_UTF8 + b"x = 2\r\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.py"]


def test_write_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.py"
    target.write_bytes(b"x = 1\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    write_atomic(str(link), b"x = 2\n", digest(b"x = 1\n"))
    assert link.is_symlink() and target.read_bytes() == b"x = 2\n"


# End to end, with the real analysis and its fixes.


def _findings(project: Project, *args: str) -> list[dict]:
    _, entries = project.lint_json(*args)
    return [entry for entry in entries if entry["code"] == "GG001"]


def test_fix_keeps_bom_crlf_and_permissions(project: Project) -> None:
    raw = codecs.BOM_UTF8 + GG001_SOURCE.replace("\n", "\r\n").encode()
    path = project.write("train.py", raw)
    path.chmod(0o640)
    (finding,) = _findings(project)
    assert finding["location"]["row"] == GG001_ROW
    assert finding["fix"] is not None, "the plainest GG001 should offer a fix"
    result = project.lint("--fix", "--unsafe-fixes")
    assert "Found 1 error (1 fixed, 0 remaining)." in result.stdout
    assert result.exit_code == 0, "nothing remains after the fix"
    data = path.read_bytes()
    assert data != raw
    assert data.startswith(codecs.BOM_UTF8)
    assert data.count(b"\n") == data.count(b"\r\n") >= GG001_SOURCE.count("\n") - 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert _findings(project) == []
    assert sorted(p.name for p in project.root.iterdir() if p.name.startswith(".train")) == []


def test_fix_keeps_a_latin1_encoding(project: Project) -> None:
    source = "# -*- coding: latin-1 -*-\n# entraînement\n" + GG001_SOURCE
    path = project.write("train.py", source.encode("latin-1"))
    project.lint("--fix", "--unsafe-fixes")
    data = path.read_bytes()
    assert data != source.encode("latin-1")
    assert "entraînement".encode("latin-1") in data
    data.decode("latin-1")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")


def test_diff_prints_and_writes_nothing(project: Project) -> None:
    path = project.write("train.py", GG001_SOURCE)
    result = project.lint("--diff", "--unsafe-fixes")
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("--- train.py\n+++ train.py\n@@ ")
    assert "Would fix 1 finding." in result.stderr
    assert path.read_text(encoding="utf-8") == GG001_SOURCE
    clean = project.write("train.py", "x = 1\n")
    result = project.lint("--diff")
    assert result.exit_code == 0 and result.stdout == ""
    assert clean.read_text() == "x = 1\n"


def test_safe_only_without_unsafe_fixes(project: Project) -> None:
    project.write("train.py", GG001_SOURCE)
    (finding,) = _findings(project)
    if finding["fix"]["applicability"] == "unsafe":
        result = project.lint("--fix")
        assert result.exit_code == 1
        assert (project.root / "train.py").read_text(encoding="utf-8") == GG001_SOURCE


def test_fix_in_a_notebook_edits_the_cell(project: Project) -> None:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]},
        {
            "cell_type": "code",
            "execution_count": 1,
            "metadata": {},
            "outputs": [],
            "source": GG001_SOURCE.splitlines(keepends=True)[:4],
        },
        {
            "cell_type": "code",
            "execution_count": 2,
            "metadata": {"tags": ["x"]},
            "outputs": [],
            "source": ["%time y = 1\n", "loss.backward()\n", "loss.backward()"],
        },
    ]
    document = {
        "cells": cells,
        "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = project.write("train.ipynb", json.dumps(document, indent=1) + "\n")
    (finding,) = _findings(project)
    assert (finding["cell"], finding["location"]["row"]) == (3, 3)
    diff = project.lint("--diff", "--unsafe-fixes")
    assert diff.stdout.startswith("--- train.ipynb:cell 3\n+++ train.ipynb:cell 3\n@@ "), diff.stdout
    project.lint("--fix", "--unsafe-fixes")
    text = path.read_text(encoding="utf-8")
    assert text.startswith('{\n "cells": [') and text.endswith("}\n")
    fixed = json.loads(text)
    assert fixed["cells"][:2] == cells[:2]
    assert fixed["cells"][2]["metadata"] == {"tags": ["x"]}
    assert fixed["cells"][2]["source"][0] == "%time y = 1\n"
    assert fixed["cells"][2]["source"] != cells[2]["source"]
    assert _findings(project) == []


def test_fix_never_touches_files_without_findings(project: Project) -> None:
    path = project.write(
        "clean.py", "import torch\nx = torch.ones(2, requires_grad=True)\nx.sum().backward()\n"
    )
    before = os.stat(path)
    project.lint("--fix", "--unsafe-fixes")
    after = os.stat(path)
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
