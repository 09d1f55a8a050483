"""The options ruff users expect, each as ruff does it: stdin, -q, --show-fixes, --fix-only,
--exit-non-zero-on-fix, --add-noqa, file-level noqa, unused noqa (GG100), --output-file, `rule` as JSON
and by name, `clean`, the no-files warning, syntax errors in files that never call backward, --watch."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from cli_support import (
    CLEAN_SOURCE,
    GG001_ROW,
    GG001_SOURCE,
    NO_TORCH_SOURCE,
    Project,
    subprocess_env,
)
from click.testing import CliRunner

from gradguard.analysis import might_hold_finding
from gradguard.cli import main

# GG003 with a safe fix: the hidden state is detached at the top of the loop.
GG003_SOURCE = """\
import torch

h = torch.zeros(1)
w = torch.randn(1, requires_grad=True)
for step in range(3):
    h = h * w
    h.sum().backward()
"""


def _gradguard(project: Project, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gradguard", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=project.root,
        env=subprocess_env(),
        timeout=120,
        check=False,
    )


def test_stdin_is_linted_as_the_file_named_by_stdin_filename(project: Project) -> None:
    project.write("pyproject.toml", "[tool.gradguard.per-file-ignores]\n'scripts/*.py' = ['GG001']\n")
    project.write("scripts/keep.py", "x = 1\n")
    named = _gradguard(project, "lint", "--no-cache", "-", "--stdin-filename", "src/train.py", stdin=GG001_SOURCE)
    assert named.returncode == 1, named.stderr
    assert named.stdout.startswith(f"src/train.py:{GG001_ROW}:1: GG001 ")
    ignored = _gradguard(project, "lint", "-", "--stdin-filename", "scripts/run.py", stdin=GG001_SOURCE)
    assert ignored.returncode == 0, ignored.stdout + ignored.stderr
    anonymous = _gradguard(project, "lint", "-", "--output-format", "json", stdin=GG001_SOURCE)
    assert [e["code"] for e in json.loads(anonymous.stdout)] == ["GG001"]
    assert not (project.root / "-").exists()
    broken = _gradguard(project, "lint", "-", stdin="def f(:\n")
    assert broken.returncode == 2 and "syntax error" in broken.stdout


def test_stdin_fix_writes_the_fixed_text_to_stdout_and_the_rest_to_stderr(project: Project) -> None:
    fixed = _gradguard(project, "lint", "-", "--fix", stdin=GG003_SOURCE)
    assert fixed.returncode == 0, fixed.stderr
    assert "    h = h.detach()\n    h = h * w\n" in fixed.stdout
    compile(fixed.stdout, "fixed.py", "exec")
    assert "GG003" not in fixed.stdout
    unchanged = _gradguard(project, "lint", "-", "--fix", stdin=GG001_SOURCE)
    assert unchanged.returncode == 1
    assert unchanged.stdout == GG001_SOURCE
    assert "GG001" in unchanged.stderr
    diff = _gradguard(project, "lint", "-", "--diff", "--stdin-filename", "t.py", stdin=GG003_SOURCE)
    assert diff.returncode == 1 and "+    h = h.detach()" in diff.stdout


def test_quiet_prints_the_findings_and_nothing_else(project: Project) -> None:
    project.write("train.py", GG001_SOURCE)
    project.write("clean.py", CLEAN_SOURCE)
    result = project.lint("-q")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [next(line for line in project.lint().stdout.splitlines() if "GG001" in line)]
    assert result.stderr == ""
    assert project.lint("-q", "clean.py").stdout == ""
    fixed = project.lint("-q", "--fix", "--unsafe-fixes")
    assert fixed.stdout == "" and fixed.stderr == ""


def test_show_fixes_lists_what_the_fixes_removed(project: Project) -> None:
    project.write("train.py", GG003_SOURCE)
    result = project.lint("--fix", "--show-fixes", "--no-cache")
    assert result.exit_code == 0, result.output
    # As ruff prints it: the block, then the summary counting what was fixed, all on stdout.
    assert result.stdout == (
        "\nFixed 1 finding:\n- train.py:\n    1 \u00d7 GG003 (state-not-detached)\n\n"
        "Found 1 error (1 fixed, 0 remaining).\n"
    )


def test_fix_only_reports_nothing_left_and_exit_non_zero_on_fix(project: Project) -> None:
    project.write("state.py", GG003_SOURCE)
    project.write("double.py", GG001_SOURCE)  # unsafe fix only: left as it is, and not reported
    result = project.lint("--fix-only", "--no-cache")
    assert result.exit_code == 0, result.output
    assert result.stdout == "Fixed 1 finding.\n"  # as ruff: only what was fixed
    assert "h = h.detach()" in (project.root / "state.py").read_text()
    assert (project.root / "double.py").read_text() == GG001_SOURCE
    project.write("state.py", GG003_SOURCE)
    assert project.lint("--fix-only", "--exit-non-zero-on-fix", "--no-cache").exit_code == 1
    assert project.lint("--fix-only", "--exit-non-zero-on-fix", "--no-cache").exit_code == 0  # nothing left to fix
    project.write("state.py", GG003_SOURCE)
    (project.root / "double.py").unlink()
    assert project.lint("--fix", "--no-cache").exit_code == 0
    project.write("state.py", GG003_SOURCE)
    assert project.lint("--fix", "--exit-non-zero-on-fix", "--no-cache").exit_code == 1


def test_add_noqa_silences_every_finding_and_keeps_other_codes(project: Project) -> None:
    lines = GG001_SOURCE.splitlines(keepends=True)
    lines[GG001_ROW - 1] = lines[GG001_ROW - 1].rstrip("\n") + "  # noqa: E501\n"
    project.write("a.py", "".join(lines))
    project.write("b.py", GG003_SOURCE)
    result = project.lint("--add-noqa", "--no-cache")
    assert result.exit_code == 0, result.output
    assert "Added 2 noqa directives." in result.stderr
    a = (project.root / "a.py").read_text().splitlines()
    assert a[GG001_ROW - 1] == "loss.backward()  # noqa: E501, GG001"
    assert "    h.sum().backward()  # noqa: GG003" in (project.root / "b.py").read_text()
    after = project.lint("--no-cache")
    assert after.exit_code == 0, after.output
    assert project.lint("--add-noqa", "--no-cache").stderr.strip().endswith("Added 0 noqa directives.")


def test_file_level_noqa_silences_the_file_or_one_rule(project: Project) -> None:
    project.write("all.py", "# gradguard: noqa\n" + GG001_SOURCE)
    project.write("one.py", GG001_SOURCE + "# gradguard: noqa: GG003\n" + "h = 0\n")
    project.write("this.py", "# gradguard: noqa: GG001\n" + GG001_SOURCE)
    project.write("string.py", 's = """\n# gradguard: noqa\n"""\n' + GG001_SOURCE)
    found = project.codes_by_file("--no-cache")
    assert set(found) == {"one.py", "string.py"}
    assert found["one.py"] == [("GG001", GG001_ROW)]


def test_unused_noqa_is_a_warning_with_a_safe_fix(project: Project) -> None:
    source = CLEAN_SOURCE.replace("    loss.backward()\n", "    loss.backward()  # noqa: GG001, E501\n")
    project.write("train.py", source)
    result = project.lint("--no-cache")
    assert result.exit_code == 1
    assert "train.py:6:22: GG100 [*] Unused `noqa` directive: no finding of `GG001` on this line" in result.stdout
    assert "warning" in result.stdout.splitlines()[-1]
    assert project.lint("--fix", "--no-cache").exit_code == 0
    assert (project.root / "train.py").read_text() == CLEAN_SOURCE.replace(
        "    loss.backward()\n", "    loss.backward()  # noqa: E501\n"
    )
    project.write("ignored.py", source)
    assert project.lint("--no-cache", "--ignore", "GG100", "ignored.py").exit_code == 0


def test_unused_noqa_is_reported_in_a_file_that_never_calls_backward(project: Project) -> None:
    """Such a file is never analysed, so no rule can report on it: every gradguard code its directives
    name is unused, cold and warm (a directive for other tools' codes alone keeps the file skipped)."""
    project.write("helpers.py", NO_TORCH_SOURCE.replace("a + b\n", "a + b  # noqa: GG003\n"))
    project.write("other.py", NO_TORCH_SOURCE.replace("a + b\n", "a + b  # noqa: E501\n"))
    for _ in range(2):
        result = project.lint()
        assert result.exit_code == 1, result.output
        assert "helpers.py:2:19: GG100 [*] Unused `noqa` directive: no finding of `GG003` on this line" in result.stdout
        assert "other.py" not in result.stdout
    assert project.lint("--fix").exit_code == 0
    assert (project.root / "helpers.py").read_text() == NO_TORCH_SOURCE
    assert might_hold_finding(b"x = 1  # NOQA: GG001\n") and not might_hold_finding(b"x = 1  # noqa: E501\n")


def test_output_file_receives_the_report(project: Project) -> None:
    project.write("train.py", GG001_SOURCE)
    result = project.lint("--output-format", "json", "-o", "reports/gg.json", "--no-cache")
    assert result.exit_code == 1
    assert result.stdout == ""
    entries = json.loads((project.root / "reports" / "gg.json").read_text(encoding="utf-8"))
    assert [e["code"] for e in entries] == ["GG001"]
    project.lint("--output-file", "out.txt", "--no-cache")
    text = (project.root / "out.txt").read_text(encoding="utf-8")
    assert "GG001" in text and "\x1b" not in text


def test_rule_as_json_and_by_name() -> None:
    runner = CliRunner()
    by_name = runner.invoke(main, ["rule", "state-not-detached", "--output-format", "json"])
    assert by_name.exit_code == 0, by_name.output
    data = json.loads(by_name.stdout)
    assert (data["code"], data["name"], data["fix_applicability"]) == ("GG003", "state-not-detached", "safe")
    assert "## What it does" in data["explanation"] and "# [GG" not in data["explanation"]
    everything = json.loads(runner.invoke(main, ["rule", "--all", "--output-format", "json"]).stdout)
    assert [rule["code"] for rule in everything][:3] == ["GG001", "GG002", "GG003"]
    assert "GG100" in [rule["code"] for rule in everything]
    text = runner.invoke(main, ["rule", "unused-noqa"], env={"NO_COLOR": "1"})
    assert text.stdout.startswith("GG100 unused-noqa\n")


def test_rule_table_is_never_cut_when_piped_or_narrow() -> None:
    from gradguard import catalogue

    for columns in ("40", "200"):
        listing = CliRunner().invoke(main, ["rule", "--all"], env={"NO_COLOR": "1", "COLUMNS": columns})
        assert listing.exit_code == 0
        assert "\u2026" not in listing.stdout
        for doc in catalogue.load().values():
            line = next(line for line in listing.stdout.splitlines() if line.startswith(doc.code))
            assert doc.name in line and doc.summary in line
        assert all(line == line.rstrip() for line in listing.stdout.splitlines())  # no padding written


def test_clean_removes_cache_folders(project: Project) -> None:
    project.write("train.py", GG001_SOURCE)
    project.write("sub/pyproject.toml", "[tool.gradguard]\n")
    project.write("sub/t.py", GG001_SOURCE)
    project.lint()
    project.lint("sub")
    assert (project.root / ".gradguard_cache").is_dir()
    result = CliRunner().invoke(main, ["clean"])
    assert result.exit_code == 0
    assert not (project.root / ".gradguard_cache").exists()
    assert not (project.root / "sub" / ".gradguard_cache").exists()
    assert (project.root / "train.py").exists()
    assert "No cache" in CliRunner().invoke(main, ["clean"]).stderr


def test_no_python_file_is_a_warning(project: Project) -> None:
    project.write("notes.txt", "nothing\n")
    result = project.lint()
    assert result.exit_code == 0
    assert "warning: No Python files found under the given path(s)" in result.stderr
    assert project.lint("-q").stderr == ""


def test_syntax_errors_are_reported_in_files_that_never_call_backward(project: Project) -> None:
    project.write("utils.py", "def add(a, b:\n    return a + b\n")
    project.write("fine.py", NO_TORCH_SOURCE)
    project.write("outside.py", "return 3\n")  # a compiler error, which `python outside.py` raises too
    result = project.lint("--no-cache")
    assert result.exit_code == 2
    assert "utils.py:1:8: error: syntax error" in result.stdout
    assert "outside.py:1:1: error: syntax error: 'return' outside function" in result.stdout
    assert "fine.py" not in result.stdout


def test_a_warm_run_does_not_check_unchanged_files_again(project: Project, monkeypatch) -> None:
    import gradguard.runner

    project.write("train.py", GG001_SOURCE)  # analysed: it creates the cache folder
    project.write("utils.py", NO_TORCH_SOURCE)
    project.write("broken.py", "def f(:\n")
    checked: list[str] = []
    real = gradguard.runner.syntax_error

    def counting(item):  # type: ignore[no-untyped-def]
        checked.append(item.path)
        return real(item)

    monkeypatch.setattr(gradguard.runner, "syntax_error", counting)
    assert project.lint().exit_code == 2
    assert sorted(checked) == ["broken.py", "utils.py"]
    checked.clear()
    assert project.lint().exit_code == 2
    assert checked == ["broken.py"]  # a file that does not compile is checked every time
    project.write("utils.py", NO_TORCH_SOURCE + "def g(:\n")
    assert "utils.py:3:7: error: syntax error" in project.lint().stdout


def test_the_summary_after_fix_counts_what_was_fixed_and_what_remains(project: Project) -> None:
    project.write("state.py", GG003_SOURCE)
    project.write("double.py", GG001_SOURCE)  # its fix is unsafe: it remains
    result = project.lint("--fix", "--no-cache")
    assert result.exit_code == 1, result.output
    assert result.stdout.endswith("Found 2 errors (1 fixed, 1 remaining, 1 fixable with --unsafe-fixes).\n")
    assert result.stderr == ""


def _wait_for(path: Path, text: str, count: int, deadline: float) -> str:
    """The content of `path` once it holds `text` `count` times (a watch's output file, polled)."""
    while time.monotonic() < deadline:
        content = path.read_text(encoding="utf-8")
        if content.count(text) >= count:
            return content
        time.sleep(0.1)
    raise AssertionError(f"{text!r} x{count} never came: {path.read_text(encoding='utf-8')!r}")


def test_watch_lints_again_when_a_file_is_edited_or_created(project: Project) -> None:
    project.write("train.py", CLEAN_SOURCE)
    out, err = project.root.parent / "watch.out", project.root.parent / "watch.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        watch = subprocess.Popen(
            [sys.executable, "-m", "gradguard", "lint", "--watch", "--no-cache"],
            cwd=project.root, env=subprocess_env(), stdout=stdout, stderr=stderr, text=True,
        )
    try:
        deadline = time.monotonic() + 60
        _wait_for(err, "Watching for file changes.", 1, deadline)
        assert "All checks passed!" in out.read_text(encoding="utf-8")
        project.write("second.py", GG001_SOURCE)  # a new file
        _wait_for(err, "Watching for file changes.", 2, deadline)
        assert f"second.py:{GG001_ROW}:1: GG001" in out.read_text(encoding="utf-8")
        project.write("second.py", CLEAN_SOURCE)  # an edit
        _wait_for(err, "Watching for file changes.", 3, deadline)
        assert out.read_text(encoding="utf-8").endswith("All checks passed!\n")
        assert err.read_text(encoding="utf-8").count("File change detected...") == 2
    finally:
        watch.send_signal(signal.SIGINT)
        assert watch.wait(timeout=30) == 130
