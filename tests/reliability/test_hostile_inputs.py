"""Hostile files (`fixtures/hostile/`, plus generated ones too big or too deep to commit): each gets one
clear line or a correct result, the other files of the same run are still linted, and the exit code says
whether an error happened."""

from __future__ import annotations

import codecs
import json
import os
import time

import pytest
from reliability_support import BUGGY_SOURCE, Project, deep_tree, fuzz_long, lines_for

from gradguard.engine import MAX_ANALYSED_CHARS

# What a run over the whole hostile folder prints about each file: the exact line, or None (clean).
EXPECTED = {
    "real_bug.py": "real_bug.py:6:1: GG001 `loss` is backward-ed again",
    "bom.py": "bom.py:6:1: GG001 ",
    "crlf.py": "crlf.py:6:1: GG001 ",
    "mixed_endings.py": "mixed_endings.py:6:1: GG001 ",
    "tabs.py": "tabs.py:9:2: GG001 ",
    "latin1_cookie.py": "latin1_cookie.py:8:1: GG001 ",
    "magics.ipynb": "magics.ipynb:cell 6:2:1: GG001 ",
    "syntax_error.py": "syntax_error.py:3:10: error: syntax error: '(' was never closed",
    "python2.py": "python2.py:10:12: error: syntax error: leading zeros in decimal integer literals are not"
    " permitted; use an 0o prefix for octal integers",
    "deep_nesting.py": "deep_nesting.py:4:208: error: syntax error: too many nested parentheses",
    "binary.py": "binary.py: error: binary file (it contains NUL bytes), not Python source",
    "utf16.py": "utf16.py: error: encoded as UTF-16, which Python cannot run (save it as UTF-8)",
    "malformed.ipynb": "malformed.ipynb: error: malformed notebook JSON: Expecting value (line 1, column 68)",
    "empty.py": None,
    "no_cells.ipynb": None,
    "huge.py": "huge.py: error: too large to analyse (10.0 MB of code, the limit is 2 MB), not linted",
    "huge_data.py": None,
}
FINE = [name for name, line in EXPECTED.items() if line is None or ": error: " not in line]


def _huge_training_script(size: int) -> str:
    """A generated module of `size` characters, thousands of functions each calling backward."""
    head = "import torch\nw = torch.randn(3, requires_grad=True)\n"
    block = "def step_{0}(x):\n    y = x * {0} + w\n    loss = y.sum()\n    loss.backward()\n    return loss.item()\n\n"
    parts, length, index = [head], len(head), 0
    while length < size:
        part = block.format(index)
        parts.append(part)
        length += len(part)
        index += 1
    return "".join(parts)


def _add_generated(project: Project) -> None:
    project.write("huge.py", _huge_training_script(10_000_000))
    # Ten megabytes of data that cannot hold a finding: skipped by the prefilter, clean.
    project.write("huge_data.py", "TABLE = [\n" + "    (1.0, 2.0, 3.0, 'abc'),\n" * 380_000 + "]\n")


@pytest.mark.slow
def test_one_run_over_every_hostile_file(hostile: Project) -> None:
    _add_generated(hostile)
    started = time.monotonic()
    done = hostile.run("lint", "--no-cache", ".")
    elapsed = time.monotonic() - started
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output
    for name, expected in EXPECTED.items():
        lines = lines_for(output, name)
        if expected is None:
            assert lines == [], (name, output)
        else:
            assert len(lines) == 1 and lines[0].startswith(expected), (name, lines, output)
    assert "7 files could not be linted." in output
    assert elapsed < 60, f"the run took {elapsed:.0f} s"


def test_json_output_names_every_failed_file_and_still_holds_the_findings(hostile: Project) -> None:
    done = hostile.run("lint", "--no-cache", "--output-format", "json", ".")
    assert done.returncode == 2, done.stderr
    entries = json.loads(done.stdout)
    errored = sorted(
        entry["filename"].rsplit("/", 1)[-1] for entry in entries if entry["code"] == "file-error"
    )
    assert errored == sorted(
        name for name, line in EXPECTED.items() if line and ": error: " in line and "huge" not in name
    )
    flagged = sorted(entry["filename"].rsplit("/", 1)[-1] for entry in entries if entry["code"] == "GG001")
    assert flagged == sorted(name for name in FINE if EXPECTED[name] is not None and "huge" not in name)


def test_without_the_broken_files_the_exit_code_says_findings_not_errors(hostile: Project) -> None:
    names = [name for name in FINE if "huge" not in name]
    done = hostile.run("lint", "--no-cache", *names)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "could not be linted" not in done.stdout + done.stderr


def _endings(data: bytes) -> dict[bytes, bytes]:
    """Each line's text and the ending it had (for lines whose text occurs once)."""
    lines = data.splitlines(keepends=True)
    bare = [line.rstrip(b"\r\n") for line in lines]
    return {b: line[len(b) :] for b, line in zip(bare, lines, strict=True) if bare.count(b) == 1}


def test_fix_over_the_hostile_folder_fixes_what_it_can_and_leaves_the_rest_byte_for_byte(
    hostile: Project,
) -> None:
    before = {path.name: path.read_bytes() for path in hostile.root.iterdir() if path.is_file()}
    done = hostile.run("lint", "--no-cache", "--fix", "--unsafe-fixes", ".")
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "(7 fixed, 0 remaining)." in done.stdout, output
    after = {path.name: path.read_bytes() for path in hostile.root.iterdir() if path.is_file()}
    assert set(after) == set(before), "a file appeared or vanished"
    for name, data in before.items():
        if name in (
            "bom.py",
            "crlf.py",
            "mixed_endings.py",
            "tabs.py",
            "latin1_cookie.py",
            "magics.ipynb",
            "real_bug.py",
        ):
            assert after[name] != data, name
            old, new = _endings(data), _endings(after[name])
            assert {line: new[line] for line in new if line in old} == {
                line: old[line] for line in new if line in old
            }
        else:
            assert after[name] == data, name
    assert after["bom.py"].startswith(codecs.BOM_UTF8)
    assert b"\t" in after["tabs.py"] and b"    " not in after["tabs.py"]
    assert "Entraînement".encode("latin-1") in after["latin1_cookie.py"]
    again = hostile.run("lint", "--no-cache", "--fix", "--unsafe-fixes", ".")
    assert "Fixed" not in again.stderr
    assert {path.name: path.read_bytes() for path in hostile.root.iterdir() if path.is_file()} == after


# Expressions nested 2,000 deep in the ways Python allows. CPython itself refuses 2,000 nested brackets;
# the other forms it compiles, and libcst's native parser used to overflow the C stack on several of them
# and take the whole process down. Each file also holds the plainest bug, after the deep expression.
DEEP = {
    "parens": "loss = " + "(" * 2000 + "w.sum()" + ")" * 2000,
    "calls": "loss = " + "f(" * 2000 + "w" + ")" * 2000,
    "lists": "table = " + "[" * 2000 + "]" * 2000,
    "dicts": "table = " + "{1: " * 2000 + "1" + "}" * 2000,
    "strings": "text = " + " ".join(['"a"'] * 2000),
    "lambdas": "make = " + "lambda: " * 2000 + "w",
}
# Forms the analysis gives up on without a word (see the xfail below); slow ones run in long mode only.
DEEP_GIVEN_UP = {
    "unary": "loss = " + "-" * 2000 + "w.sum()",
    "not": "flag = " + "not " * 2000 + "w",
    "attributes": "value = w" + ".T" * 2000,
}
DEEP_LONG = {
    "and": "flag = " + " and ".join(["w"] * 2000),
    "power": "loss = " + " ** ".join(["w"] * 2000),
    "sum": "loss = " + " + ".join(["w.sum()"] * 2000),
    "conditionals": "value = " + "w if w else " * 2000 + "w",
    "elifs": "if w is None:\n    pass\n" + "elif w is None:\n    pass\n" * 2000,
}
CLEAR = (
    ": error: syntax error: too many nested parentheses",
    ": error: the code is nested too deeply to analyse",
)


def _lint_deep(project: Project, forms: dict[str, str]) -> dict[str, list[str]]:
    """Lint one file per form, each a deep expression followed by the plainest bug, in one run; for each
    form, the lines that do not say what they should (a correct finding or a clear error)."""
    head = "import torch\n\nw = torch.randn(3, requires_grad=True)\n"
    tail = "\nloss = (w * 2).sum()\nloss.backward()\nloss.backward()\n"
    for name, expression in forms.items():
        project.write(f"deep_{name}.py", head + expression + tail)
    project.write("real_bug.py", BUGGY_SOURCE)
    done = project.run("lint", "--no-cache", "--workers", "2", ".", timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode in (1, 2), output
    assert "Traceback" not in output
    assert lines_for(output, "real_bug.py")[0].startswith("real_bug.py:6:1: GG001 ")
    wrong = {}
    for name, expression in forms.items():
        lines = lines_for(output, f"deep_{name}.py")
        correct = f"deep_{name}.py:{4 + expression.count(chr(10)) + 3}:1: GG001 "
        if not (len(lines) == 1 and (lines[0].startswith(correct) or lines[0].endswith(CLEAR))):
            wrong[name] = lines
    return wrong


@pytest.mark.slow
def test_expressions_nested_2000_deep_get_a_clear_line_or_a_correct_result(project: Project) -> None:
    assert _lint_deep(project, DEEP) == {}


@pytest.mark.slow
def test_code_the_analysis_cannot_follow_is_reported_not_passed(project: Project) -> None:
    assert _lint_deep(project, DEEP_GIVEN_UP) == {}


@pytest.mark.skipif(not fuzz_long(), reason="a minute of libcst parsing: long mode only")
def test_more_expressions_nested_2000_deep_never_crash(project: Project) -> None:
    wrong = _lint_deep(project, DEEP_LONG)
    assert all(lines == [] for lines in wrong.values()), (
        wrong
    )  # silent at worst (the xfail above), never a crash


def test_a_file_just_over_the_size_limit_is_reported_one_just_under_is_linted(project: Project) -> None:
    padding = MAX_ANALYSED_CHARS - len(BUGGY_SOURCE)
    project.write("under.py", BUGGY_SOURCE + "#" * (padding - 2) + "\n")
    project.write("over.py", BUGGY_SOURCE + "#" * padding + "\n")
    done = project.run("lint", "--no-cache", ".")
    assert lines_for(done.stdout, "over.py") == [
        "over.py: error: too large to analyse (2.0 MB of code, the limit is 2 MB), not linted"
    ]
    assert lines_for(done.stdout, "under.py")[0].startswith("under.py:6:1: GG001 ")


ODD_NAMES = {
    b"caf\xe9.py": "caf%E9.py",  # not UTF-8: the name's own bytes
    "émoji_🔥.py".encode(): "%C3%A9moji_%F0%9F%94%A5.py",
    b"spa ce.py": "spa%20ce.py",
    b"-dash.py": "-dash.py",
    b"dir.py/inner.py": "dir.py/inner.py",  # a folder whose name ends in .py
}


@pytest.mark.parametrize("fmt", ["concise", "full", "json", "github", "sarif"])
def test_odd_file_names_in_every_output_format(project: Project, fmt: str) -> None:
    for name in ODD_NAMES:
        path = os.path.join(os.fsencode(project.root), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(BUGGY_SOURCE.encode())
    done = project.run("lint", "--no-cache", "--output-format", fmt)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    if fmt == "json":
        assert len(json.loads(done.stdout)) == len(ODD_NAMES)
    if fmt == "sarif":
        results = json.loads(done.stdout)["runs"][0]["results"]
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
        assert uris == set(ODD_NAMES.values())


def test_a_folder_tree_nested_deeper_than_the_recursion_limit_is_walked() -> None:
    """1,200 nested folders (past Python's recursion limit of 1,000): the walk and the configuration
    lookup both used to recurse and end in a RecursionError traceback."""
    with deep_tree(1200) as (project, folder):
        (folder / "train.py").write_text(BUGGY_SOURCE, encoding="utf-8")
        relative = "/".join(["d"] * 1200) + "/train.py"
        for args in (("lint", "--no-cache"), ("lint", "--no-cache", relative)):
            done = project.run(*args)
            assert done.returncode == 1, done.stdout[-500:] + done.stderr[-2000:]
            assert lines_for(done.stdout, relative)[0].startswith(f"{relative}:6:1: GG001 ")
