"""`gradguard run`: the program runs as `python` would run it, and `--report` follows the schema."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradguard.runtime import monitor
from gradguard.runtime.diagnosis import REPORT_SCHEMA
from gradguard.runtime.runner import run_program

pytestmark = pytest.mark.torch

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURES = REPO / "fixtures"


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _validate(report: object) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(report, REPORT_SCHEMA)


def test_script_sees_the_same_argv_main_and_path(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _write(
        tmp_path,
        "prog.py",
        """
        import json, sys
        import gradguard.runtime.monitor as m
        print(json.dumps({"argv": sys.argv, "name": __name__, "file": __file__, "path0": sys.path[0],
                          "main": sys.modules["__main__"].__dict__ is globals(), "monitor": m.is_installed()}))
        """,
    )
    saved_argv = list(sys.argv)
    report = tmp_path / "report.json"
    monkeypatch.chdir(tmp_path)
    assert run_program("prog.py", ["--epochs", "3", "x y"], module=False, report=str(report)) == 0
    seen = json.loads(capfd.readouterr().out.strip().splitlines()[-1])
    assert seen == {
        "argv": ["prog.py", "--epochs", "3", "x y"],
        "name": "__main__",
        "file": str(script),
        "path0": str(tmp_path),
        "main": True,
        "monitor": True,
    }
    assert json.loads(report.read_text()) is None
    assert sys.argv == saved_argv
    assert not monitor.is_installed()


def test_exit_codes(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    cases = {
        "ok.py": ("x = 1\n", 0),
        "three.py": ("import sys\nsys.exit(3)\n", 3),
        "message.py": ("raise SystemExit('bye')\n", 1),
        "crash.py": ("def f():\n    raise ValueError('boom')\nf()\n", 1),
        "interrupt.py": ("raise KeyboardInterrupt\n", 130),
    }
    for name, (text, code) in cases.items():
        assert run_program(str(_write(tmp_path, name, text)), [], module=False, report=None) == code, name
    err = capfd.readouterr().err
    assert "bye" in err
    crash = err[err.index("Traceback") :]
    assert crash.splitlines()[1].strip().startswith(f'File "{tmp_path / "crash.py"}", line 3')
    assert "runpy" not in crash and "runner.py" not in crash
    assert "ValueError: boom" in crash


def test_missing_script_and_module(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert run_program(str(tmp_path / "nope.py"), [], module=False, report=None) == 2
    assert run_program("no_such_module_gg", [], module=True, report=None) == 1
    err = capfd.readouterr().err
    assert "can't open file" in err and "No module named no_such_module_gg" in err


def test_run_a_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, "pkg/__init__.py", "")
    _write(tmp_path, "pkg/train.py", "import sys\nprint(__name__, sys.argv[1:])\nsys.exit(int(sys.argv[1]))\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert run_program("pkg.train", ["4"], module=True, report=None) == 4
    assert capfd.readouterr().out.strip() == "__main__ ['4']"


def test_report_of_a_buggy_program(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    script = _write(
        tmp_path,
        "buggy.py",
        f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import scenarios
        scenarios.gan_fake_not_detached()
        """,
    )
    report_path = tmp_path / "out" / "report.json"
    report_path.parent.mkdir()
    assert run_program(str(script), [], module=False, report=str(report_path)) == 1
    report = json.loads(report_path.read_text())
    _validate(report)
    import scenarios

    assert report["failing_call"] == {
        "filename": scenarios.__file__,
        "line": scenarios.marked_line("gan-fails"),
        "function": "gan_fake_not_detached",
        "call_index": 2,
    }
    assert report["freed_by"]["line"] == scenarios.marked_line("gan-frees")
    assert report["carrier"]["expression"] == "fake"
    assert report["fix"]["kind"] == "detach" and report["rule"] == "GG005" and report["node"] == "AddmmBackward0"
    err = capfd.readouterr().err
    assert "RuntimeError: Trying to backward through the graph a second time" in err
    assert "gradguard: backward call #2 reused a graph that call #1 freed (AddmmBackward0)" in err


def test_report_names_an_error_caught_by_the_program(tmp_path: Path) -> None:
    script = _write(
        tmp_path,
        "caught.py",
        f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import scenarios
        try:
            scenarios.inplace_after_save()
        except RuntimeError:
            print("recovered")
        """,
    )
    report = tmp_path / "r.json"
    assert run_program(str(script), [], module=False, report=str(report)) == 0
    data = json.loads(report.read_text())
    _validate(data)
    assert data["error"] == "inplace-modified" and data["carrier"]["expression"] == "probs"


def test_unwritable_report_is_an_error(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    script = _write(tmp_path, "ok.py", "x = 1\n")
    assert run_program(str(script), [], module=False, report=str(tmp_path / "missing" / "r.json")) == 2
    assert "cannot write the report" in capfd.readouterr().err


# --------------------------------------------------------------------------------------------------
# The real command, in a subprocess (a handful only: each one imports torch)


def _gradguard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "gradguard", "run", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.slow
def test_gradguard_run_report_on_a_fixture(tmp_path: Path) -> None:
    fixture = FIXTURES / "buggy" / "gg003_gru_tensor_hidden.py"
    if not fixture.exists():
        pytest.skip("fixture not present")
    report = tmp_path / "report.json"
    done = _gradguard("--report", str(report), str(fixture), cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    data = json.loads(report.read_text())
    _validate(data)
    assert data["carrier"]["expression"] == "h" and data["fix"]["kind"] == "detach" and data["rule"] == "GG003"
    assert "gradguard: backward call #2 reused a graph that call #1 freed" in done.stderr
    assert done.stderr.index("RuntimeError: Trying to backward") < done.stderr.index("gradguard: backward call")


@pytest.mark.slow
def test_gradguard_run_module_and_clean_program(tmp_path: Path) -> None:
    _write(tmp_path, "pkg/__init__.py", "")
    _write(
        tmp_path,
        "pkg/clean.py",
        f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import scenarios
        print("total", round(scenarios.clean_loop(), 3) > 0, sys.argv[1:])
        sys.exit(5)
        """,
    )
    report = tmp_path / "r.json"
    done = _gradguard("--report", str(report), "-m", "pkg.clean", "a", "--flag", cwd=tmp_path)
    assert done.returncode == 5, done.stderr
    assert done.stdout.strip() == "total True ['a', '--flag']"
    assert "gradguard" not in done.stderr
    assert json.loads(report.read_text()) is None


@pytest.mark.slow
def test_gradguard_run_on_a_terminal_draws_the_panel(tmp_path: Path) -> None:
    script = _write(
        tmp_path,
        "buggy.py",
        f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import scenarios
        scenarios.rnn_hidden_not_detached()
        """,
    )
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="120", TERM="xterm")
    env.pop("NO_COLOR", None)
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "gradguard", "run", str(script)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
    )
    os.close(secondary)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([primary], [], [], 300)
        if not ready:
            process.kill()
            break
        try:
            chunk = os.read(primary, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    assert process.wait(timeout=60) == 1
    text = b"".join(chunks).decode(errors="replace")
    assert "RuntimeError: Trying to backward through the graph a second time" in text
    assert "╭" in text and "╰" in text
    assert "hidden = hidden.detach()" in text
    # The plain note is replaced by the panel on a terminal, not printed twice.
    assert text.count("reused a graph that call #1 freed") == 1
