"""Broken configuration: one message naming the file, the key and what was expected; exit code 2; nothing
linted, no traceback. Every way a `[tool.gradguard]` table (or `gradguard.toml`) can be wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from reliability_support import BUGGY_SOURCE, Project, deep_tree

from gradguard.cli import main

TABLE = "[tool.gradguard]\n"

# (config file name, its text, the parts the message must hold besides the file's path)
CASES = {
    "invalid TOML": ("pyproject.toml", TABLE + "select = [GG001]\n", ["invalid TOML", "line 2"]),
    "unclosed table": ("pyproject.toml", "[tool.gradguard\nselect = []\n", ["invalid TOML", "line 1"]),
    "nested 5,000 deep": (
        "pyproject.toml",
        "[project]\nx = " + "[" * 5000 + "]" * 5000 + "\n",
        ["invalid TOML", "nested too deeply"],
    ),
    "duplicate key": ("pyproject.toml", TABLE + "select = []\nselect = []\n", ["invalid TOML", "line 3"]),
    "unknown rule code": (
        "pyproject.toml",
        TABLE + 'select = ["GG999"]\n',
        ["[tool.gradguard] select", "'GG999'", "expected a rule code or a prefix of one"],
    ),
    "unknown code in ignore": (
        "pyproject.toml",
        TABLE + 'ignore = ["E501"]\n',
        ["[tool.gradguard] ignore", "'E501'", "expected a rule code"],
    ),
    "unknown code in extend-select": (
        "gradguard.toml",
        'extend-select = ["GG0011"]\n',
        ["extend-select", "'GG0011'", "expected a rule code"],
    ),
    "unknown code per file": (
        "pyproject.toml",
        TABLE + '[tool.gradguard.per-file-ignores]\n"train.py" = ["XX1"]\n',
        ["per-file-ignores 'train.py'", "'XX1'", "expected a rule code"],
    ),
    "string instead of list": (
        "pyproject.toml",
        TABLE + 'select = "GG001"\n',
        ["[tool.gradguard] select", "expected a list of strings, got str 'GG001'"],
    ),
    "list of numbers": (
        "pyproject.toml",
        TABLE + "ignore = [1, 2]\n",
        ["[tool.gradguard] ignore", "expected a list of strings, got list [1, 2]"],
    ),
    "number instead of patterns": (
        "pyproject.toml",
        TABLE + "exclude = 3\n",
        ["[tool.gradguard] exclude", "expected a list of strings, got int 3"],
    ),
    "table instead of list": (
        "pyproject.toml",
        TABLE + "extend-exclude = {a = 1}\n",
        ["[tool.gradguard] extend-exclude", "expected a list of strings, got dict"],
    ),
    "unknown output format": (
        "pyproject.toml",
        TABLE + 'output-format = "pretty"\n',
        ["[tool.gradguard] output-format", "expected one of concise, full, json, json-lines, github", "'pretty'"],
    ),
    "per-file-ignores as a list": (
        "pyproject.toml",
        TABLE + 'per-file-ignores = ["train.py"]\n',
        ["[tool.gradguard] per-file-ignores", "expected a table of pattern = [rule codes]"],
    ),
    "per-file codes as a string": (
        "pyproject.toml",
        TABLE + '[tool.gradguard.per-file-ignores]\n"train.py" = "GG001"\n',
        ["per-file-ignores 'train.py'", "expected a list of strings, got str 'GG001'"],
    ),
    "unknown key": (
        "pyproject.toml",
        TABLE + "line-length = 100\n",
        ["[tool.gradguard] unknown key 'line-length'", "expected one of: select, ignore"],
    ),
    "snake case key": (
        "pyproject.toml",
        TABLE + "extend_select = []\n",
        ["unknown key 'extend_select'", "expected one of", "did you mean 'extend-select'?"],
    ),
    "section is not a table": (
        "pyproject.toml",
        "[tool]\ngradguard = 3\n",
        ["[tool.gradguard] expected a table"],
    ),
    "not UTF-8": ("pyproject.toml", b"[tool.gradguard]\n# \xff\xfe\n", ["cannot read the configuration"]),
}


def _run(project: Project, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.chdir(project.root)
    result = CliRunner().invoke(main, ["lint", "--no-cache", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("case", list(CASES))
def test_a_broken_configuration_is_one_message_and_exit_2(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, text, parts = CASES[case]
    project = Project.create(tmp_path / "proj")
    config = project.write(name, text)
    project.write("train.py", BUGGY_SOURCE)
    code, stdout, stderr = _run(project, monkeypatch)
    assert code == 2, stderr
    assert stdout == "", "nothing may be linted with a broken configuration"
    assert len(stderr.splitlines()) == 1, stderr
    assert stderr.startswith(f"gradguard: error: {config}: "), stderr
    for part in parts:
        assert part in stderr, (part, stderr)


def test_a_broken_configuration_in_a_sub_project_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = Project.create(tmp_path / "proj", TABLE + 'select = ["GG"]\n')
    project.write("train.py", BUGGY_SOURCE)
    nested = project.write("sub/pyproject.toml", TABLE + 'select = ["GG42"]\n')
    project.write("sub/model.py", BUGGY_SOURCE)
    code, stdout, stderr = _run(project, monkeypatch)
    assert (code, stdout) == (2, "")
    assert stderr.startswith(f"gradguard: error: {nested}: [tool.gradguard] select: unknown rule code"), (
        stderr
    )


def test_broken_command_line_selectors_and_config_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = Project.create(tmp_path / "proj")
    project.write("train.py", BUGGY_SOURCE)
    broken = project.write("broken.toml", "select = 3\n")
    for args, parts in (
        (("--select", "GG999"), ["gradguard: error: --select: unknown rule code or prefix 'GG999'"]),
        (("--ignore", "GG001,,X"), ["gradguard: error: --ignore: unknown rule code or prefix 'X'"]),
        (
            ("--config", str(broken)),
            [f"gradguard: error: {broken}: (top level) select: expected a list of strings"],
        ),
        (("--config", "missing.toml"), ["gradguard: error: --config", "missing.toml: no such file"]),
    ):
        code, stdout, stderr = _run(project, monkeypatch, *args)
        assert (code, stdout) == (2, ""), (args, stderr)
        assert len(stderr.splitlines()) == 1 and all(part in stderr for part in parts), (args, stderr)


def test_per_file_patterns_are_checked_through_a_tree_deeper_than_the_recursion_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Checking that a pattern matches some file walks the project; os.walk recursed once per level."""
    with deep_tree(1100) as (project, folder):
        project.write("train.py", BUGGY_SOURCE)
        (folder / "deep.py").write_text("x = 1\n", encoding="utf-8")
        # A pattern matching nothing is a warning (the run goes on: exit 1 for train.py's finding).
        for pattern, warned in (("**/deep.py", False), ("**/absent.py", True)):
            project.write(
                "pyproject.toml", TABLE + f'[tool.gradguard.per-file-ignores]\n"{pattern}" = ["GG001"]\n'
            )
            code, _, stderr = _run(project, monkeypatch, "train.py")
            assert code == 1, stderr
            assert ("matches no file" in stderr) is warned, stderr
            assert "Traceback" not in stderr
