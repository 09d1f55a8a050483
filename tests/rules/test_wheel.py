"""The built wheel ships the rule documents (hatchling force-include `rules` -> `gradguard/_catalogue`)
and the installed package reads them from there."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("build") is None:
        pytest.skip(
            "the `build` package is not installed (it comes with the dev extra)"
        )
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (built,) = out.glob("gradguard-*.whl")
    return built


def test_the_wheel_contains_every_rule_document(wheel: Path) -> None:
    documents = sorted((REPO / "rules").glob("GG*.md"))
    assert documents
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for document in documents:
            shipped = f"gradguard/_catalogue/{document.name}"
            assert shipped in names
            assert archive.read(shipped) == document.read_bytes()
        assert not any(name.startswith(("rules/", "tests/")) for name in names)


def test_the_installed_package_reads_the_shipped_catalogue(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    probe = (
        "import json; from gradguard import catalogue; "
        "print(json.dumps([str(catalogue.catalogue_dir()), sorted(catalogue.load())]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    folder, codes = json.loads(proc.stdout)
    assert Path(folder) == site / "gradguard" / "_catalogue"
    assert codes == sorted(
        p.name.split("-", 1)[0] for p in (REPO / "rules").glob("GG*.md")
    )
