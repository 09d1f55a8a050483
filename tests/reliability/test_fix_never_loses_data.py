"""`--fix` never loses data: the file is replaced atomically with its permissions, encoding, BOM and line
endings; a file that changed on disk since gradguard read it is not written (and the user is told); a
write that fails or is killed half-way leaves the original as it was."""

from __future__ import annotations

import codecs
import json
import os
import shutil
import stat
import subprocess
import sys

import pytest
from reliability_support import (
    BUGGY_ROW,
    BUGGY_SOURCE,
    Project,
    gradguard_command,
    hook_events,
    lines_for,
    subprocess_env,
)

FIX = ("lint", "--no-cache", "--fix", "--unsafe-fixes")
FORMS = {
    "utf8.py": BUGGY_SOURCE.encode(),
    "bom.py": codecs.BOM_UTF8 + BUGGY_SOURCE.encode(),
    "crlf.py": BUGGY_SOURCE.replace("\n", "\r\n").encode(),
    "cr.py": BUGGY_SOURCE.replace("\n", "\r").encode(),
    "latin1.py": ("# -*- coding: latin-1 -*-\n# données d'entraînement\n" + BUGGY_SOURCE).encode("latin-1"),
    "cp1252_crlf.py": ("# coding: cp1252\r\n# “quotes” – €\r\n" + BUGGY_SOURCE.replace("\n", "\r\n")).encode(
        "cp1252"
    ),
    "tabs.py": b"import torch\n\nw = torch.randn(3, requires_grad=True)\nfor i in range(2):\n"
    b"\tloss = (w * 2).sum()\n\tloss.backward()\n\tloss.backward()\n",
}
MODES = {"utf8.py": 0o644, "bom.py": 0o600, "crlf.py": 0o755, "cr.py": 0o640, "latin1.py": 0o664}


def _original_lines_kept(before: bytes, after: bytes) -> None:
    """Every line of the fixed file that was in the original keeps the ending it had there."""
    old = before.splitlines(keepends=True)
    bare = [line.rstrip(b"\r\n") for line in old]
    endings = {b: line[len(b) :] for b, line in zip(bare, old, strict=True) if bare.count(b) == 1}
    for line in after.splitlines(keepends=True):
        text = line.rstrip(b"\r\n")
        if text in endings:
            assert line[len(text) :] == endings[text], (line, endings[text])


def test_fix_keeps_encoding_bom_line_endings_permissions_and_replaces_atomically(project: Project) -> None:
    paths = {}
    for name, data in FORMS.items():
        paths[name] = project.write(name, data)
        paths[name].chmod(MODES.get(name, 0o644))
    inodes = {name: path.stat().st_ino for name, path in paths.items()}
    done = project.run(*FIX)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert f"({len(FORMS)} fixed, 0 remaining)." in done.stdout
    for name, path in paths.items():
        data = path.read_bytes()
        assert data != FORMS[name], name
        assert stat.S_IMODE(path.stat().st_mode) == MODES.get(name, 0o644), name
        assert path.stat().st_ino != inodes[name], f"{name} was rewritten in place, not replaced"
        assert data.startswith(codecs.BOM_UTF8) == (name == "bom.py"), name
        _original_lines_kept(FORMS[name], data)
    assert b"\n" not in paths["cr.py"].read_bytes()
    assert paths["crlf.py"].read_bytes().count(b"\n") == paths["crlf.py"].read_bytes().count(b"\r\n")
    assert "données d'entraînement".encode("latin-1") in paths["latin1.py"].read_bytes()
    assert "“quotes” – €".encode("cp1252") in paths["cp1252_crlf.py"].read_bytes()
    assert sorted(p.name for p in project.root.iterdir()) == sorted([*FORMS, "pyproject.toml"]), "leftovers"
    fixed = {name: path.read_bytes() for name, path in paths.items()}
    again = project.run(*FIX)
    assert again.returncode == 0 and "Fixed" not in again.stderr
    assert {name: path.read_bytes() for name, path in paths.items()} == fixed


def test_a_file_changed_on_disk_between_read_and_write_is_not_written(project: Project) -> None:
    edited = project.write("edited.py", BUGGY_SOURCE)
    other = project.write("other.py", BUGGY_SOURCE)
    log = project.root.parent / "hook.log"
    user_edit = "# saved by the user's editor while gradguard was fixing\n"
    done = project.run(
        *FIX, "edited.py", hook={"GG_TEST_EDIT_BEFORE_WRITE": user_edit, "GG_TEST_LOG": str(log)}
    )
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert lines_for(output, "edited.py") == [
        "edited.py: error: not fixed: the file changed on disk while gradguard was fixing it"
    ]
    assert edited.read_text(encoding="utf-8") == BUGGY_SOURCE + user_edit
    assert [event["event"] for event in hook_events(log)] == ["edited"]
    assert other.read_text(encoding="utf-8") == BUGGY_SOURCE
    done = project.run(*FIX)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "saved by the user's editor" in edited.read_text(encoding="utf-8")


def test_a_process_killed_just_before_the_replace_leaves_every_original_whole(project: Project) -> None:
    paths = [project.write(f"m{index}.py", BUGGY_SOURCE) for index in range(3)]
    serial = project.run(*FIX, "m0.py", hook={"GG_TEST_KILL_ON_REPLACE": "1"})
    assert serial.returncode == -9
    pool = project.run(*FIX, "--workers", "2", hook={"GG_TEST_KILL_ON_REPLACE": "1"})
    assert pool.returncode == 2, pool.stdout + pool.stderr
    assert all(path.read_text(encoding="utf-8") == BUGGY_SOURCE for path in paths)
    assert sorted(p.name for p in project.root.iterdir() if p.suffix == ".py") == ["m0.py", "m1.py", "m2.py"]
    assert "Traceback" not in pool.stdout + pool.stderr


def test_a_full_disk_leaves_the_file_as_it_was_and_no_temporary_file(project: Project) -> None:
    path = project.write("train.py", BUGGY_SOURCE)
    done = project.run(*FIX, hook={"GG_TEST_FAIL_FSYNC": "1"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert lines_for(done.stdout + done.stderr, "train.py") == [
        "train.py: error: not fixed: cannot write: No space left on device"
    ]
    assert path.read_text(encoding="utf-8") == BUGGY_SOURCE
    assert sorted(p.name for p in project.root.iterdir()) == ["pyproject.toml", "train.py"]


def _as_unprivileged() -> list[str]:
    """A command prefix under which the tests' root user cannot write where the mode forbids it."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    capabilities = "--bounding-set=-dac_override,-dac_read_search"
    if setpriv is None or subprocess.run([setpriv, capabilities, "true"], check=False).returncode != 0:
        pytest.skip("running as root without a way to drop CAP_DAC_OVERRIDE (setpriv)")
    return [setpriv, capabilities]


def test_a_read_only_folder_is_reported_and_nothing_is_written(project: Project) -> None:
    folder = project.root / "locked"
    path = project.write("locked/train.py", BUGGY_SOURCE)
    prefix = _as_unprivileged()
    folder.chmod(0o555)
    try:
        done = subprocess.run(
            [*prefix, *gradguard_command(*FIX)],
            cwd=project.root,
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        folder.chmod(0o755)
    assert done.returncode == 2, done.stdout + done.stderr
    assert lines_for(done.stdout + done.stderr, "locked/train.py") == [
        "locked/train.py: error: not fixed: cannot write in its folder: Permission denied"
    ]
    assert path.read_text(encoding="utf-8") == BUGGY_SOURCE
    assert sorted(p.name for p in folder.iterdir()) == ["train.py"]


def test_a_read_only_file_is_reported_and_left_alone(project: Project) -> None:
    """A read-only file (a Perforce checkout, a vendored copy) is not replaced behind the user's back,
    although its folder would allow it."""
    locked = project.write("vendored.py", BUGGY_SOURCE)
    other = project.write("train.py", BUGGY_SOURCE)
    locked.chmod(0o444)
    done = subprocess.run(
        [*_as_unprivileged(), *gradguard_command(*FIX)],
        cwd=project.root,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert lines_for(done.stdout + done.stderr, "vendored.py") == [
        "vendored.py: error: not fixed: the file is read-only"
    ]
    assert locked.read_text(encoding="utf-8") == BUGGY_SOURCE
    assert stat.S_IMODE(locked.stat().st_mode) == 0o444
    assert other.read_text(encoding="utf-8") != BUGGY_SOURCE


def test_diff_writes_nothing(project: Project) -> None:
    paths = {name: project.write(name, data) for name, data in FORMS.items()}
    stamps = {name: path.stat().st_mtime_ns for name, path in paths.items()}
    done = project.run("lint", "--no-cache", "--diff", "--unsafe-fixes")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.count("+++ ") == len(FORMS)
    assert {name: (path.read_bytes(), path.stat().st_mtime_ns) for name, path in paths.items()} == {
        name: (FORMS[name], stamps[name]) for name in FORMS
    }


def test_fix_in_a_notebook_with_a_broken_cell_reports_everything_and_writes_nothing(project: Project) -> None:
    """A cell that does not parse stops `--fix` for that notebook, but the other cells' findings are still
    reported (they used to vanish from the output of `--fix`)."""
    cells = [
        "import torch\nw = torch.randn(3, requires_grad=True)\nloss = (w * 2).sum()\nloss.backward()\n",
        "def broken(:\n",
        "loss.backward()\n",
    ]
    document = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": text} for text in cells],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    text = json.dumps(document, indent=1) + "\n"
    path = project.write("train.ipynb", text)
    expected = [
        "train.ipynb: error: cell 2, line 1, column 12: syntax error: invalid syntax",
        "train.ipynb:cell 3:1:1: GG001 ",
    ]
    for args in (("lint", "--no-cache"), FIX):
        done = project.run(*args)
        output = done.stdout + done.stderr
        assert done.returncode == 2, (args, output)
        lines = lines_for(output, "train.ipynb")
        assert len(lines) == 2 and lines[0] == expected[0] and lines[1].startswith(expected[1]), (
            args,
            output,
        )
        assert path.read_text(encoding="utf-8") == text
    done = project.run("lint", "--no-cache", "--diff", "--unsafe-fixes")  # --diff shows diffs and errors only
    assert done.returncode == 2
    assert (done.stdout, lines_for(done.stderr, "train.ipynb")) == ("", [expected[0]])


@pytest.mark.skipif(sys.platform != "linux", reason="hard links and inode numbers as on Linux")
def test_fix_through_a_symlink_writes_the_target_and_keeps_the_link(project: Project) -> None:
    target = project.write("real/train.py", BUGGY_SOURCE)
    link = project.root / "train.py"
    link.symlink_to("real/train.py")
    done = project.run(*FIX, "train.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") != BUGGY_SOURCE
    assert f":{BUGGY_ROW}:" not in project.run("lint", "--no-cache", "train.py").stdout


def _notebook_styles() -> dict[str, str]:
    """One buggy notebook written the ways tools write them."""
    document = {
        "cells": [
            {
                "cell_type": "markdown",
                "metadata": {},
                "source": ["# Entraînement — “café” 🔥\n", "</script>"],
            },
            {
                "cell_type": "code",
                "execution_count": 3,
                "metadata": {},
                "outputs": [{"name": "stdout", "output_type": "stream", "text": ["lr=1e-05 café\n"]}],
                "source": BUGGY_SOURCE.splitlines(keepends=True),
            },
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    jupyter = json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    return {
        "jupyter.ipynb": jupyter,
        "crlf.ipynb": jupyter.replace("\n", "\r\n"),
        "tabs.ipynb": json.dumps(document, indent="\t", ensure_ascii=False) + "\n",
        "escaped.ipynb": json.dumps(document, indent=2, ensure_ascii=True),
        "one_line.ipynb": json.dumps(document),
    }


def test_fix_in_a_notebook_changes_only_the_fixed_lines_whatever_its_style(project: Project) -> None:
    styles = _notebook_styles()
    for name, text in styles.items():
        project.write(name, text.encode("utf-8"))
    done = project.run(*FIX)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"({len(styles)} fixed, 0 remaining)." in done.stdout
    for name, text in styles.items():
        after = (project.root / name).read_bytes().decode("utf-8")
        assert after != text, name
        removed = [line for line in text.splitlines() if line not in after.splitlines()]
        added = [line for line in after.splitlines() if line not in text.splitlines()]
        if name != "one_line.ipynb":
            assert len(removed) <= 2 and len(added) <= 2, (name, removed, added)
            assert all("backward" in line or line.strip() in ("]", "],") for line in removed + added), name
        assert after.count("\r\n") == (after.count("\n") if name == "crlf.ipynb" else 0), name
        assert after.endswith("\n") == text.endswith("\n"), name
