"""Every stage handles its errors per file (issue 12): each class of hostile input, at each stage (read,
decode, notebook parse, prefilter, cache, analysis, fix, report), costs its own file one line naming the
path (and the line where there is one), the run exits 2, and the real findings of the files beside it
are still printed, in every output format, cold and warm."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from reliability_support import (
    BUGGY_ROW,
    BUGGY_SOURCE,
    Project,
    gradguard_command,
    lines_for,
    subprocess_env,
)

from gradguard.config import OUTPUT_FORMATS
from gradguard.engine import InputError, decode

# The codecs of issue 12, item 1: CPython refuses a file declaring one (`SyntaxError: encoding problem`).
REFUSED_CODECS = ("rot13", "hex", "base64", "zlib", "bz2", "uu", "quopri", "punycode")
MARKER = "#GG-FAIL"


def _refused(codec: str) -> bytes:
    return f"# coding: {codec}\n".encode() + BUGGY_SOURCE.encode()


# name -> (content, the start of its one error line). Each stage of the parent's triage and the workers'.
HOSTILE: dict[str, tuple[bytes | str, str]] = {
    **{
        f"cookie_{codec}.py": (_refused(codec), f"cookie_{codec}.py:1:1: error: encoding problem: ")
        for codec in REFUSED_CODECS
    },
    "bom_latin1.py": (
        b"\xef\xbb\xbf# -*- coding: latin-1 -*-\n" + BUGGY_SOURCE.encode(),
        "bom_latin1.py:1:1: error: encoding problem: a UTF-8 BOM and a 'latin-1' coding cookie",
    ),
    "not_utf8.py": (
        b"import torch\nname = '\xe9'\n",
        "not_utf8.py:2:9: error: not UTF-8 and no coding cookie",
    ),
    "huge_integer.ipynb": (
        '{"cells": [], "metadata": {}, "nbformat": 4, "count": ' + "9" * 5000 + "}",
        "huge_integer.ipynb: error: malformed notebook JSON: Exceeds the limit (4300 digits) for integer"
        " string conversion: value has 5000 digits (line 1, column 55)",
    ),
    "syntax.py": ("import torch\nloss.backward(\n", "syntax.py:2:14: error: syntax error: "),
    "fail_prepare.py": (
        f"import torch\n{MARKER} prepare\n",
        "fail_prepare.py: error: internal error while decoding this file, please report it: RuntimeError:",
    ),
    "fail_prescreen.py": (
        f"import torch\n{MARKER} prescreen\n",
        "fail_prescreen.py: error: internal error while prefiltering this file, please report it:",
    ),
    "fail_screen.ipynb": (
        json.dumps({"cells": [{"cell_type": "code", "source": f"import torch\n{MARKER} screen\n"}]}),
        "fail_screen.ipynb: error: internal error while prefiltering this file, please report it:",
    ),
    "die_analysis.py": (
        BUGGY_SOURCE + "#GG-DIE recursion\n",
        "die_analysis.py: error: the code is nested too deeply to analyse",
    ),
}
FIFO = "pipe.py"
HOOK = {"GG_TEST_FAIL_MARKER": MARKER, "GG_TEST_DIE_MARKER": "#GG-DIE"}
BUGS = ("real_bug.py", "also_bug.py")


def _fill(project: Project) -> None:
    for name, (content, _) in HOSTILE.items():
        project.write(name, content)
    os.mkfifo(project.root / FIFO)
    for name in BUGS:
        project.write(name, BUGGY_SOURCE)


def _named(output: str, name: str, fmt: str) -> bool:
    """Whether a format's stdout names the file (the machine formats hold its path)."""
    if fmt == "full":
        return f"--> {name}" in output
    if fmt in ("json", "sarif", "gitlab", "json-lines", "rdjson", "junit"):
        return name in output
    if fmt == "github":
        return f"file={name}" in output
    return any(line.startswith(f"{name}:") for line in output.splitlines())


@pytest.mark.parametrize("fmt", OUTPUT_FORMATS)
def test_each_hostile_input_costs_its_own_file_one_line_in_every_format_cold_and_warm(
    project: Project, fmt: str
) -> None:
    _fill(project)
    cold = project.run("lint", "--no-cache", "--output-format", fmt, hook=HOOK, timeout=300)
    output = cold.stdout + cold.stderr
    assert cold.returncode == 2, output
    assert "Traceback" not in output
    errors = cold.stderr if fmt in ("json", "sarif", "github") else cold.stdout
    for name, (_, expected) in HOSTILE.items():
        if fmt in ("concise", "json", "sarif", "github"):
            lines = lines_for(errors, name)
            assert len(lines) == 1 and lines[0].startswith(expected), (name, lines)
        assert _named(cold.stdout, name, fmt), (name, cold.stdout)
    assert _named(cold.stdout, FIFO, fmt)
    for name in BUGS:
        assert _named(cold.stdout, name, fmt), (name, cold.stdout)
    if fmt == "concise":
        assert lines_for(cold.stdout, "real_bug.py")[0].startswith(f"real_bug.py:{BUGGY_ROW}:1: GG001 ")
    if fmt in ("json", "sarif"):
        json.loads(cold.stdout)
    for _ in range(2):  # the first run fills the cache, the second is served by it
        warm = project.run("lint", "--output-format", fmt, hook=HOOK, timeout=300)
        assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)


def test_a_failure_in_the_cache_stage_costs_one_file(project: Project) -> None:
    project.write("fail_cache.py", f"import torch\nloss.backward()\n{MARKER} entry_key\n")
    project.write("real_bug.py", BUGGY_SOURCE)
    for _ in range(2):
        done = project.run("lint", hook=HOOK)
        assert done.returncode == 2, done.stdout + done.stderr
        assert lines_for(done.stdout, "fail_cache.py") == [
            "fail_cache.py: error: internal error while reading the cache for this file, please report it:"
            " RuntimeError: injected into entry_key"
        ]
        assert lines_for(done.stdout, "real_bug.py")[0].startswith(f"real_bug.py:{BUGGY_ROW}:1: GG001 ")


def test_fix_and_diff_leave_hostile_files_byte_for_byte_and_fix_the_rest(project: Project) -> None:
    _fill(project)
    before = {name: (project.root / name).read_bytes() for name in HOSTILE}
    diff = project.run("lint", "--diff", "--unsafe-fixes", hook=HOOK, timeout=300)
    assert diff.returncode == 2, diff.stdout + diff.stderr
    assert "Traceback" not in diff.stdout + diff.stderr
    assert sorted(line[4:] for line in diff.stdout.splitlines() if line.startswith("--- ")) == sorted(BUGS)
    done = project.run("lint", "--fix", "--unsafe-fixes", hook=HOOK, timeout=300)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output
    assert "(2 fixed, 0 remaining)." in done.stdout
    assert {name: (project.root / name).read_bytes() for name in HOSTILE} == before
    for name, (_, expected) in HOSTILE.items():
        lines = lines_for(output, name)
        assert len(lines) == 1 and lines[0].startswith(expected), (name, lines)


@pytest.mark.parametrize("codec", REFUSED_CODECS)
def test_a_refused_coding_cookie_is_refused_as_cpython_refuses_it(codec: str, tmp_path: Path) -> None:
    data = _refused(codec)
    script = tmp_path / "f.py"
    script.write_bytes(data)
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, check=False)
    assert b"SyntaxError: encoding problem" in ran.stderr
    with pytest.raises(InputError) as raised:
        decode(data, "f.py")
    assert raised.value.error.message.startswith("encoding problem: ")
    assert raised.value.error.row == 1


@pytest.mark.parametrize(
    ("cookie", "accepted"),
    [
        ("utf-8", True),
        ("UTF_8", True),
        ("utf-8-sig", True),
        ("utf8", False),
        ("latin-1", False),
        ("iso-8859-1", False),
        ("cp1252", False),
    ],
)
def test_a_bom_with_a_cookie_is_accepted_exactly_when_cpython_accepts_it(
    cookie: str, accepted: bool, tmp_path: Path
) -> None:
    data = f"\ufeff# coding: {cookie}\nx = 'é'\n".encode()
    script = tmp_path / "f.py"
    script.write_bytes(data)
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, check=False)
    assert (ran.returncode == 0) is accepted, ran.stderr
    if accepted:
        assert decode(data, "f.py") == ("# coding: " + cookie + "\nx = 'é'\n", "utf-8-sig")
    else:
        with pytest.raises(InputError) as raised:
            decode(data, "f.py")
        assert raised.value.error.message.startswith("encoding problem: a UTF-8 BOM and a ")


def _drop_read_override() -> list[str] | None:
    """A command prefix running gradguard without root's power to read any file, or None."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, check=False)
    return prefix if probe.returncode == 0 else None


def test_an_unreadable_file_named_on_the_command_line_is_one_line_and_the_rest_is_linted(
    project: Project,
) -> None:
    prefix = _drop_read_override()
    if prefix is None:
        pytest.skip("running as root without a way to drop CAP_DAC_OVERRIDE (setpriv)")
    secret = project.write("secret.py", BUGGY_SOURCE)
    project.write("train.py", BUGGY_SOURCE)
    secret.chmod(0)
    try:
        done = subprocess.run(
            [*prefix, *gradguard_command("lint", "--no-cache", "secret.py", "train.py", "x.py")],
            cwd=project.root,
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        secret.chmod(0o644)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Usage:" not in output
    assert lines_for(output, "secret.py") == ["secret.py: error: cannot read: permission denied"]
    assert lines_for(output, "x.py") == ["x.py: error: no such file or directory"]
    assert lines_for(output, "train.py")[0].startswith(f"train.py:{BUGGY_ROW}:1: GG001 ")
