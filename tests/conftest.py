"""Shared pytest set-up: snapshot files of what users see, refreshed with `--update-snapshots`."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-snapshots",
        action="store_true",
        default=False,
        help="rewrite tests/<dir>/snapshots/*.txt with the output the tests produce now",
    )


@pytest.fixture
def snapshot(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """`snapshot(name, text)`: compare `text` with `snapshots/<name>.txt` beside the test file.

    With `--update-snapshots` the file is (re)written instead; review the diff before committing it.
    """
    folder = Path(request.path).parent / "snapshots"
    update = request.config.getoption("--update-snapshots")

    def check(name: str, actual: str) -> None:
        path = folder / f"{name}.txt"
        if update:
            folder.mkdir(exist_ok=True)
            if not path.exists() or path.read_text(encoding="utf-8") != actual:
                path.write_text(actual, encoding="utf-8", newline="\n")
            return
        if not path.exists():
            pytest.fail(f"no snapshot {path}; run pytest with --update-snapshots to create it")
        expected = path.read_text(encoding="utf-8")
        if actual != expected:
            diff = "".join(
                difflib.unified_diff(
                    expected.splitlines(keepends=True),
                    actual.splitlines(keepends=True),
                    fromfile=f"{path} (snapshot)",
                    tofile="actual",
                )
            )
            pytest.fail(f"output differs from snapshot {path.name} (--update-snapshots rewrites it):\n{diff}")

    return check
