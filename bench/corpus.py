"""The real PyTorch code the benches run on: torch's installed sources and four libraries' wheels.

torch is read where it is installed. transformers, lightning, accelerate and diffusers are fetched with
`pip download --no-deps NAME==VERSION` and unpacked (a wheel is a zip) into a folder git ignores
(`bench/corpus/` by default). Versions are pinned so two runs of the bench read the same code.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_ROOT = BENCH_DIR / "corpus"

# The wheels fetched from PyPI (pinned; bump them together with the numbers the README quotes).
PINNED: dict[str, str] = {
    "transformers": "5.25.0",
    "lightning": "2.6.6",
    "accelerate": "1.16.0",
    "diffusers": "0.42.1",
}
NAMES: tuple[str, ...] = ("torch", *PINNED)
_DONE = ".unpacked"


@dataclass(frozen=True)
class Corpus:
    """One folder of real code and the Python files in it (sorted, absolute)."""

    name: str
    label: str  # name and version, for tables
    path: Path
    files: tuple[Path, ...]

    @property
    def size(self) -> int:
        """Bytes of Python source in the corpus."""
        return sum(file.stat().st_size for file in self.files)

    def sample(self, count: int, seed: int) -> tuple[Path, ...]:
        """A fixed random sample of `count` files (all of them when there are fewer)."""
        if count >= len(self.files):
            return self.files
        return tuple(sorted(random.Random(f"{seed}:{self.name}").sample(self.files, count)))


def python_files(folder: Path) -> tuple[Path, ...]:
    """Every `.py` file below `folder` (what `gradguard lint` and `ruff check` both discover there)."""
    found: list[Path] = []
    for directory, subdirs, names in os.walk(folder):
        subdirs[:] = sorted(d for d in subdirs if d not in {".git", "__pycache__"})
        found.extend(Path(directory, name) for name in names if name.endswith(".py"))
    return tuple(sorted(found))


def torch_corpus() -> Corpus:
    """torch's own installed sources (torch is imported in a child process: the bench never imports it)."""
    script = "import os, torch; print(os.path.dirname(torch.__file__)); print(torch.__version__)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    folder, version = out.split()
    path = Path(folder)
    return Corpus("torch", f"torch {version}", path, python_files(path))


def fetch_wheel(name: str, version: str, root: Path) -> Path:
    """Download and unpack one wheel under `root` once; later calls reuse the unpacked folder."""
    target = root / f"{name}-{version}"
    if (target / _DONE).exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gradguard-bench-") as download:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                f"{name}=={version}",
                "-d",
                download,
            ],
            check=True,
        )
        wheels = list(Path(download).glob("*.whl"))
        if len(wheels) != 1:
            raise RuntimeError(
                f"pip download {name}=={version} gave {[w.name for w in wheels]}, not one wheel"
            )
        with zipfile.ZipFile(wheels[0]) as archive:
            archive.extractall(target)
    (target / _DONE).write_text(f"{name}=={version}\n")
    return target


def load(name: str, root: Path = DEFAULT_ROOT) -> Corpus:
    """The corpus called `name` (one of `NAMES`), fetched on first use."""
    if name == "torch":
        return torch_corpus()
    if name not in PINNED:
        raise KeyError(f"unknown corpus {name!r} (known: {', '.join(NAMES)})")
    version = PINNED[name]
    path = fetch_wheel(name, version, root)
    return Corpus(name, f"{name} {version}", path, python_files(path))


def from_folder(name: str, folder: Path) -> Corpus:
    """A corpus made of any folder (for a quick run, or the bench's own smoke test)."""
    path = folder.resolve()
    if not path.is_dir():
        raise FileNotFoundError(f"corpus folder {folder} does not exist")
    return Corpus(name, name, path, python_files(path))
