"""Which files `gradguard lint` reads: recursion, .gitignore (nested, negated), excludes, explicit paths."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_support import GG001_ROW, GG001_SOURCE, Project

from gradguard import discovery
from gradguard.cache import Cache
from gradguard.config import Resolver
from gradguard.discovery import _git_ignored, _Ignore, _read_gitignore, discover

KNOWN = ("GG001", "GG002")


def _found(project: Project, *paths: str, force_exclude: bool = False) -> tuple[list[str], list[str]]:
    project.monkeypatch.chdir(project.root)
    result = discover(list(paths) or ["."], Resolver(project.root, known=KNOWN), force_exclude=force_exclude)
    return sorted(p.replace(os.sep, "/") for p in result.files), [
        f"{e.path}: {e.message}" for e in result.errors
    ]


def _git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def test_recursive_py_and_ipynb_only(project: Project) -> None:
    for name in ("a.py", "pkg/b.py", "pkg/sub/c.ipynb", "pkg/notes.txt", "pkg/d.pyi", "setup.cfg"):
        project.write(name, "x = 1\n")
    files, errors = _found(project)
    assert files == ["a.py", "pkg/b.py", "pkg/sub/c.ipynb"]
    assert errors == []


def test_default_excludes(project: Project) -> None:
    for folder in (
        ".git",
        ".venv",
        "venv",
        "__pycache__",
        "build",
        "dist",
        "node_modules",
        ".gradguard_cache",
        "lib/site-packages",
        ".tox",
        ".ipynb_checkpoints",
    ):
        project.write(f"{folder}/m.py", "x = 1\n")
    project.write("src/build_utils.py", "x = 1\n")
    files, _ = _found(project)
    assert files == ["src/build_utils.py"]


def test_gitignore_root_nested_and_negation(project: Project) -> None:
    _git_init(project.root)
    project.write(".gitignore", "generated/\n*_pb2.py\n")
    project.write("generated/model.py", "x = 1\n")
    project.write("api_pb2.py", "x = 1\n")
    project.write("pkg/.gitignore", "scratch*.py\n!scratch_keep.py\n")
    project.write("pkg/scratch1.py", "x = 1\n")
    project.write("pkg/scratch_keep.py", "x = 1\n")
    project.write("pkg/deep/scratch2.py", "x = 1\n")
    project.write("other/scratch3.py", "x = 1\n")
    project.write("pkg/model.py", "x = 1\n")
    files, _ = _found(project)
    assert files == ["other/scratch3.py", "pkg/model.py", "pkg/scratch_keep.py"]


def test_gitignore_of_an_enclosing_repository_applies_to_a_subfolder(project: Project) -> None:
    _git_init(project.root)
    project.write(".gitignore", "out/\n")
    project.write("src/out/gen.py", "x = 1\n")
    project.write("src/keep.py", "x = 1\n")
    files, _ = _found(project, "src")
    assert files == ["src/keep.py"]


def test_exclude_replaces_defaults_and_extend_exclude_adds(project: Project) -> None:
    project.write("build/gen.py", "x = 1\n")
    project.write("data/loader.py", "x = 1\n")
    project.write("src/experiments/old.py", "x = 1\n")
    project.write("src/train.py", "x = 1\n")
    project.write("pyproject.toml", "[tool.gradguard]\nextend-exclude = ['data', '/src/experiments/']\n")
    assert _found(project)[0] == ["src/train.py"]
    project.write("pyproject.toml", "[tool.gradguard]\nexclude = ['data']\n")
    assert _found(project)[0] == ["build/gen.py", "src/experiments/old.py", "src/train.py"]


def test_explicit_paths_are_linted_even_when_excluded_unless_force_exclude(project: Project) -> None:
    _git_init(project.root)
    project.write(".gitignore", "ignored.py\n")
    project.write("ignored.py", "x = 1\n")
    project.write("build/gen.py", "x = 1\n")
    assert _found(project, "ignored.py", "build/gen.py")[0] == ["build/gen.py", "ignored.py"]
    assert _found(project, "build")[0] == ["build/gen.py"]
    assert _found(project, "build/gen.py", force_exclude=True)[0] == []
    assert _found(project, "build", force_exclude=True)[0] == []


def test_force_exclude_end_to_end(project: Project) -> None:
    project.write("pyproject.toml", "[tool.gradguard]\nextend-exclude = ['legacy/']\n")
    project.write("legacy/train.py", GG001_SOURCE)
    assert project.codes_by_file("legacy/train.py") == {"legacy/train.py": [("GG001", GG001_ROW)]}
    assert project.codes_by_file() == {}
    result = project.lint("--force-exclude", "legacy/train.py")
    assert result.exit_code == 0, result.output


def test_missing_broken_and_looping_paths_are_one_line_errors(project: Project) -> None:
    project.write("ok.py", "x = 1\n")
    os.symlink("nowhere.py", project.root / "broken.py")
    os.symlink("loop.py", project.root / "loop.py")
    files, errors = _found(project)
    assert files == ["ok.py"]
    assert errors == [
        "broken.py: broken symbolic link (target 'nowhere.py' does not exist)",
        "loop.py: symbolic link loop",
    ]
    files, errors = _found(project, "missing.py", "loop.py")
    assert files == []
    assert errors == ["missing.py: no such file or directory", "loop.py: symbolic link loop"]


def test_symlinked_folders_are_not_followed(project: Project) -> None:
    project.write("pkg/a.py", "x = 1\n")
    os.symlink("..", project.root / "pkg" / "parent")
    os.symlink("pkg", project.root / "alias")
    assert _found(project)[0] == ["pkg/a.py"]


GITIGNORE = """\
# build products
__pycache__/
*.py[cod]
/build/
dist
docs/**/*.png
!docs/keep/*.png
logs/
!logs/keep.log
**/cache_*/
data/*.csv
a/**/b
*.egg-info/
.venv
"""


def test_the_joined_gitignore_regex_decides_as_pathspec_does(tmp_path: Path) -> None:
    """The one-regex shortcut (a path no pattern matches is not ignored) never changes a verdict."""
    (tmp_path / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    ignore = _read_gitignore(str(tmp_path))
    assert ignore is not None and ignore.any_pattern is not None
    plain = _Ignore(ignore.base, ignore.spec)
    names = ["train.py", "x/__pycache__", "x/mod.pyc", "build", "src/build", "dist", "src/dist/y.py",
             "docs/a/b.png", "docs/keep/c.png", "logs", "logs/keep.log", "q/cache_1", "data/t.csv",
             "data/sub/t.csv", "a/b", "a/x/y/b", "ab", "pkg.egg-info", ".venv", "src/.venv", "docs/readme.md"]
    verdicts = {}
    for name in names:
        for is_dir in (False, True):
            path = str(tmp_path / name)
            fast, slow = _git_ignored(path, is_dir, [ignore]), _git_ignored(path, is_dir, [plain])
            assert fast == slow, (name, is_dir)
            verdicts[name, is_dir] = fast
    assert verdicts["train.py", False] is False and verdicts["x/mod.pyc", False] is True
    assert verdicts["docs/keep/c.png", False] is False and verdicts["docs/a/b.png", False] is True


def _age_tree(root: Path) -> None:
    """Every folder and file a minute old: a walk whose folders changed just now is not remembered."""
    stamp = os.stat(root).st_mtime - 60
    for folder, _, names in os.walk(root):
        for path in [folder, *(os.path.join(folder, name) for name in names)]:
            os.utime(path, (stamp, stamp))


def test_a_walk_is_recalled_until_a_folder_a_gitignore_or_a_config_changes(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project.root)
    project.write("a.py", "x = 1\n")
    project.write("pkg/b.py", "x = 1\n")
    project.write(".gitignore", "skip/\n")
    project.write("skip/c.py", "x = 1\n")

    def run() -> list[str]:
        cache = Cache(project.root)
        found = discover(["."], Resolver(project.root, known=KNOWN), memo=cache.walk_memo("test"))
        cache.save()
        return sorted(path.replace(os.sep, "/") for path in found.files)

    for _ in range(2):  # the second run writes the cache folder, which changes the root folder
        _age_tree(project.root)
        assert run() == ["a.py", "pkg/b.py"]
    with monkeypatch.context() as walks:
        walks.setattr(discovery._Walker, "walk", lambda *_: pytest.fail("walked again"))
        assert run() == ["a.py", "pkg/b.py"]
    project.write("pkg/new.py", "x = 1\n")  # a file added: its folder's mtime moved
    assert run() == ["a.py", "pkg/b.py", "pkg/new.py"]
    _age_tree(project.root)
    assert run() == ["a.py", "pkg/b.py", "pkg/new.py"]
    project.write(".gitignore", "skip/\npkg/\n")  # a .gitignore edited
    assert run() == ["a.py"]
    _age_tree(project.root)
    assert run() == ["a.py"]
    project.write("pyproject.toml", "[tool.gradguard]\nextend-exclude = ['a.py']\n")  # the settings edited
    assert run() == []
