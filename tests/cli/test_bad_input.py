"""Issue 2, "Bad input gets a clear message, and the run goes on": one line per bad path, the other
files still linted, exit code 2, never a traceback."""

from __future__ import annotations

import codecs
import json
import os
import shutil
import subprocess
import sys

import pytest
from cli_support import GG001_ROW, GG001_SOURCE, Project, subprocess_env

BROKEN_SCRIPT = """\
import torch

def train(model, opt:
    loss = model().sum()
    loss.backward()
"""


def _make_bad_inputs(project: Project) -> dict[str, str]:
    """Every kind of bad input next to a buggy file; returns {path: expected line prefix}."""
    project.write("train.py", GG001_SOURCE)
    project.write("broken.py", BROKEN_SCRIPT)
    project.write("latin.py", "# loss.backward()\nname = 'café'\n".encode("latin-1"))
    project.write("blob.py", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR backward \x00\xff")
    project.write("empty.py", b"")
    project.write("bad.ipynb", '{"cells": [{"cell_type": "code", "source": ["loss.backward()"]')
    project.write("nocells.ipynb", json.dumps({"metadata": {}, "nbformat": 4, "text": "loss.backward()"}))
    v3_cell = {"cell_type": "code", "input": ["loss.backward()\n"], "language": "python", "outputs": []}
    project.write(
        "old.ipynb", json.dumps({"metadata": {}, "nbformat": 3, "worksheets": [{"cells": [v3_cell]}]})
    )
    os.mkfifo(project.root / "pipe.py")
    os.symlink("gone.py", project.root / "dangling.py")
    os.symlink("loop.py", project.root / "loop.py")
    return {
        "broken.py": "broken.py:3:",
        "latin.py": "latin.py:2:12: error: not UTF-8 and no coding cookie",
        "blob.py": "blob.py: error: binary file (it contains NUL bytes), not Python source",
        "bad.ipynb": "bad.ipynb: error: malformed notebook JSON",
        "nocells.ipynb": "nocells.ipynb: error: not a Jupyter notebook: no 'cells' list",
        "old.ipynb": "old.ipynb: error: an nbformat 3 notebook (cells inside 'worksheets')",
        "pipe.py": "pipe.py: error: not a regular file (a named pipe), not linted",
        "dangling.py": "dangling.py: error: broken symbolic link (target 'gone.py' does not exist)",
        "loop.py": "loop.py: error: symbolic link loop",
        "missing.py": "missing.py: error: no such file or directory",
    }


def test_each_bad_input_gets_one_line_and_the_run_goes_on(project: Project) -> None:
    expected = _make_bad_inputs(project)
    result = project.lint(".", "missing.py", "--no-cache")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    lines = result.output.splitlines()
    for path, prefix in expected.items():
        matching = [line for line in lines if line.startswith(f"{path}:")]
        assert len(matching) == 1, (path, result.output)
        assert matching[0].startswith(prefix), matching[0]
    assert any(line.startswith(f"train.py:{GG001_ROW}:") and "GG001" in line for line in lines), result.output
    assert not any(line.startswith("empty.py") for line in lines)


def test_syntax_error_names_line_and_cpython_message(project: Project) -> None:
    project.write("broken.py", BROKEN_SCRIPT)
    result = project.lint("broken.py")
    assert result.exit_code == 2
    assert result.output.splitlines()[0] == "broken.py:3:10: error: syntax error: '(' was never closed"


def test_empty_file_and_empty_notebook_are_clean(project: Project) -> None:
    project.write("empty.py", b"")
    project.write("__init__.py", b"")
    project.write(
        "empty.ipynb", json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    result = project.lint()
    assert result.exit_code == 0, result.output


def test_json_output_holds_file_errors_and_stderr_names_them(project: Project) -> None:
    expected = _make_bad_inputs(project)
    result, entries = project.lint_json(".", "missing.py", "--no-cache")
    assert result.exit_code == 2
    errored = {os.path.basename(e["filename"]) for e in entries if e["code"] == "file-error"}
    assert errored == set(expected)
    for path, prefix in expected.items():
        assert any(line.startswith(prefix) for line in result.stderr.splitlines()), (path, result.stderr)
    assert [(os.path.basename(e["filename"]), e["code"]) for e in entries if e["code"] != "file-error"] == [
        ("train.py", "GG001")
    ]


def test_coding_cookie_and_bom_files_are_linted(project: Project) -> None:
    project.write("latin.py", ("# -*- coding: latin-1 -*-\n# café\n" + GG001_SOURCE).encode("latin-1"))
    project.write("bom.py", codecs.BOM_UTF8 + GG001_SOURCE.encode())
    assert project.codes_by_file() == {
        "bom.py": [("GG001", GG001_ROW)],
        "latin.py": [("GG001", GG001_ROW + 2)],
    }


def _can_drop_read_override() -> bool:
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return False
    probe = subprocess.run(
        [setpriv, "--bounding-set=-dac_override,-dac_read_search", "true"], capture_output=True, check=False
    )
    return probe.returncode == 0


def test_unreadable_file_and_folder(project: Project) -> None:
    """chmod 000 means nothing to root, so when the tests run as root, gradguard runs without the
    capabilities that let root read anything (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH): as any user."""
    project.write("train.py", GG001_SOURCE)
    secret = project.write("secret.py", GG001_SOURCE)
    locked = project.root / "locked"
    locked.mkdir()
    (locked / "inner.py").write_text(GG001_SOURCE, encoding="utf-8")
    prefix: list[str] = []
    if os.geteuid() == 0:
        if not _can_drop_read_override():
            pytest.skip("running as root without a way to drop CAP_DAC_OVERRIDE (setpriv)")
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    secret.chmod(0)
    locked.chmod(0)
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "gradguard", "lint", "--no-cache"],
            cwd=project.root,
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        secret.chmod(0o644)
        locked.chmod(0o755)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output
    lines = output.splitlines()
    assert "secret.py: error: cannot read: permission denied" in lines
    assert "locked: error: cannot list the folder: permission denied" in lines
    assert any(line.startswith(f"train.py:{GG001_ROW}:") for line in lines), output


def test_bad_files_are_reported_even_without_a_backward(project: Project) -> None:
    """The prefilter spares parsing, not checking: an undecodable, binary or malformed file is reported
    whether or not it could hold a finding."""
    project.write("legacy.py", "# -*- nothing declared -*-\nname = 'café'\n".encode("latin-1"))
    project.write("data.py", b"BLOB = b'\x00\x01'\n")
    project.write("broken.ipynb", '{"cells": [')
    project.write("fine.py", "def f(x):\n    return x\n")
    for _ in range(2):  # cold, then warm
        result = project.lint()
        assert result.exit_code == 2, result.output
        lines = result.output.splitlines()
        assert lines[:3] == [
            "broken.ipynb: error: malformed notebook JSON: Expecting value (line 1, column 12)",
            "data.py: error: binary file (it contains NUL bytes), not Python source",
            "legacy.py:2:12: error: not UTF-8 and no coding cookie"
            " (add `# -*- coding: <encoding> -*-` or save as UTF-8)",
        ], result.output
