"""A long fuzzing campaign through the whole lint pipeline, outside CI (the suite runs a bounded, seeded
version of each check in tests/reliability/).

Two campaigns, each from a fixed seed:
- **hostile files**: training scripts and notebooks mutated at the byte level (bit flips, inserted and
  deleted bytes, truncation, NUL bytes, coding cookies of every codec Python knows plus invented ones,
  UTF-8/16/32 BOMs, re-encoding, deep nesting, huge JSON integers, broken notebook JSON), linted in
  batches by `runner.lint_files` without the cache, then with it cold and warm (index and entries).
  Fails on any exception escaping the run, any "internal error" result, a file with no result, or a
  cached result differing from the uncached one.
- **cache flips**: one bit flipped in a random cache entry or in the index, then a warm run compared
  with the uncached reference; the file is restored after each flip.

    python bench/fuzz.py                       # 3,000 files and 2,000 flips (a few minutes on 2 cores)
    python bench/fuzz.py --files 500 --flips 200 --seed 7

Prints the figures the README quotes (counts, error classes, seconds, peak memory); exit code 1 when a
check failed.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import encodings.aliases
import json
import os
import random
import resource
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gradguard.cache import CACHE_DIR, Cache  # noqa: E402
from gradguard.config import Resolver  # noqa: E402
from gradguard.model import FileResult  # noqa: E402
from gradguard.runner import lint_files  # noqa: E402

SEEDS = (
    "import torch\n\nw = torch.randn(3, requires_grad=True)\nloss = (w * 2).sum()\nloss.backward()\n"
    "loss.backward()\n",
    "import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(4, 1)\nopt = torch.optim.SGD(model.parameters(),"
    " lr=0.1)\nhidden = torch.zeros(1)\nfor step in range(10):\n    out = model(torch.randn(2, 4)) + hidden\n"
    "    hidden = out.mean()\n    loss = out.pow(2).sum()\n    opt.zero_grad()\n    loss.backward()\n"
    "    opt.step()\n",
    "# -*- coding: utf-8 -*-\nimport torch\n\n\ndef train(model, data):\n    total = 0\n    for x, y in data:\n"
    "        loss = (model(x) - y).pow(2).mean()\n        loss.backward()\n        total += loss\n    return total\n",
)
CODECS = sorted(set(encodings.aliases.aliases.values()))
INVENTED = (
    "rot13",
    "hex",
    "base64",
    "zlib",
    "bz2",
    "uu",
    "quopri",
    "punycode",
    "idna",
    "undefined",
    "utf8",
    "utf-8-sig",
    "latin-1",
    "x-nonsense",
    "utf_16",
    "utf-32-le",
    "mbcs",
    "",
)

Mutation = Callable[[random.Random, bytes], bytes]


def _flip(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if out:
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def _insert(rng: random.Random, data: bytes) -> bytes:
    at = rng.randint(0, len(data))
    return data[:at] + rng.randbytes(rng.randint(1, 8)) + data[at:]


def _delete(rng: random.Random, data: bytes) -> bytes:
    at = rng.randint(0, max(len(data) - 1, 0))
    return data[:at] + data[at + rng.randint(1, 16) :]


def _truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randint(0, len(data))]


def _nul(rng: random.Random, data: bytes) -> bytes:
    at = rng.randint(0, len(data))
    return data[:at] + b"\0" + data[at:]


def _cookie(rng: random.Random, data: bytes) -> bytes:
    name = rng.choice(CODECS + list(INVENTED))
    line = rng.choice(
        ["# coding: {}\n", "# -*- coding: {} -*-\n", "#!/usr/bin/env python\n# vim: set fileencoding={} :\n"]
    )
    return line.format(name).encode("ascii", "replace") + data


def _bom(rng: random.Random, data: bytes) -> bytes:
    bom = rng.choice([codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE])
    return bom + (_cookie(rng, data) if rng.random() < 0.5 else data)


def _reencode(rng: random.Random, data: bytes) -> bytes:
    text = data.decode("utf-8", "replace") + "\nname = 'Entraînement ✓'\n"
    codec = rng.choice(["utf-16", "utf-32", "latin-1", "cp1252", "shift_jis", "utf-7"])
    return text.encode(codec, "replace")


def _nest(rng: random.Random, data: bytes) -> bytes:
    depth = rng.choice([50, 199, 201, 1000, 3000])
    opener, closer = rng.choice([("(", ")"), ("[", "]"), ("{1: ", "}"), ("f(", ")")])
    return data + f"\nvalue = {opener * depth}1{closer * depth}\n".encode()


def _notebook(rng: random.Random, data: bytes) -> bytes:
    source = data.decode("utf-8", "replace")
    document = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": source}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    text = json.dumps(document, indent=1)
    roll = rng.random()
    if roll < 0.2:
        text = text.replace('"nbformat": 4', '"nbformat": ' + "7" * rng.choice([4000, 4301, 20000]))
    elif roll < 0.4:
        text = text[: rng.randint(0, len(text))]
    elif roll < 0.5:
        text = "[" * 100_000 + "]" * 100_000
    elif roll < 0.7:
        return _flip(rng, text.encode())
    return text.encode()


MUTATIONS: dict[str, Mutation] = {
    "flip": _flip,
    "insert": _insert,
    "delete": _delete,
    "truncate": _truncate,
    "nul": _nul,
    "cookie": _cookie,
    "bom": _bom,
    "reencode": _reencode,
    "nest": _nest,
    "notebook": _notebook,
}


def _strip(results: list[FileResult]) -> list[tuple[object, ...]]:
    return [(r.path, r.diagnostics, r.errors, r.skipped) for r in results]


def _backdate(root: Path) -> None:
    past = time.time() - 60
    for path in root.iterdir():
        if path.is_file():
            os.utime(path, (past, past))


def _error_class(message: str) -> str:
    for marker in (":", "(", " in "):
        message = message.split(marker, 1)[0]
    return message.strip()[:60]


DECODING = ("encoding", "encoded as", "decode", "binary file", "coding cookie", "UTF-8")


def cpython_refuses_encoding(data: bytes) -> bool | None:
    """Whether CPython's compiler refuses the bytes for their encoding (None: it fails for another reason
    or not at all, so the comparison says nothing)."""
    try:
        compile(data, "f.py", "exec", dont_inherit=True)
    except SyntaxError as exc:
        message = str(exc.msg)
        return (
            True if any(word in message for word in ("encoding", "codec", "decode", "null bytes")) else None
        )
    except (ValueError, UnicodeError, LookupError):
        return True
    except (RecursionError, MemoryError, OverflowError):
        return None
    return False


def hostile_campaign(
    root: Path, files: int, seed: int, batch: int
) -> tuple[list[str], Counter[str], Counter[str], Counter[str]]:
    """Lint `files` mutated files in batches; returns (failures, mutations used, error classes,
    agreement with CPython on which files cannot be decoded)."""
    rng = random.Random(seed)
    failures: list[str] = []
    used: Counter[str] = Counter()
    classes: Counter[str] = Counter()
    agreement: Counter[str] = Counter()
    done = 0
    while done < files:
        folder = root / f"batch{done}"
        folder.mkdir()
        (folder / "pyproject.toml").write_text('[project]\nname = "fuzz"\n', encoding="utf-8")
        names = []
        for index in range(min(batch, files - done)):
            data = rng.choice(SEEDS).encode()
            kinds = rng.sample(list(MUTATIONS), rng.randint(1, 3))
            for kind in kinds:
                data = MUTATIONS[kind](rng, data)
                used[kind] += 1
            name = f"f{index}.ipynb" if "notebook" in kinds else f"f{index}.py"
            (folder / name).write_bytes(data)
            names.append(str(folder / name))
        _backdate(folder)
        resolver = Resolver(folder)
        try:
            reference = lint_files(names, resolver, workers=1)
            cold = lint_files(names, resolver, cache=Cache(folder), workers=1)
            warm = lint_files(names, resolver, cache=Cache(folder), workers=1)
        except Exception as exc:  # noqa: BLE001 - what the campaign looks for
            failures.append(f"batch at {done}: {type(exc).__name__}: {exc}")
            done += batch
            continue
        results = [outcome.result for outcome in reference]
        if len(results) != len(names):
            failures.append(f"batch at {done}: {len(results)} results for {len(names)} files")
        for run, outcomes in (("cold", cold), ("warm", warm)):
            if _strip([o.result for o in outcomes]) != _strip(results):
                failures.append(f"batch at {done}: the {run} cached run differs from --no-cache")
        for result in results:
            for error in result.errors:
                classes[_error_class(error.message)] += 1
                if "internal error" in error.message:
                    failures.append(f"{result.path}: {error.message}")
            if result.path.endswith(".py"):
                refused = cpython_refuses_encoding(Path(result.path).read_bytes())
                ours = any(any(word in e.message for word in DECODING) for e in result.errors)
                if refused is not None:
                    verdict = (
                        "agree"
                        if refused == ours
                        else f"cpython {'refuses' if refused else 'accepts'}, "
                        f"gradguard {'refuses' if ours else 'accepts'}"
                    )
                    agreement[verdict] += 1
                    if verdict != "agree" and agreement[verdict] <= 3:
                        head = Path(result.path).read_bytes()[:60]
                        print(f"  disagreement: {verdict}: {head!r} {[e.message for e in result.errors]}")
        done += batch
    return failures, used, classes, agreement


def flip_campaign(root: Path, flips: int, seed: int) -> list[str]:
    """Flip one bit of the cache at a time; every warm run must equal the uncached one."""
    rng = random.Random(seed)
    folder = root / "flips"
    folder.mkdir()
    (folder / "pyproject.toml").write_text('[project]\nname = "fuzz"\n', encoding="utf-8")
    names = []
    for index in range(12):
        source = (
            SEEDS[index % len(SEEDS)]
            .replace("range(10)", f"range({index + 2})")
            .replace("w * 2", f"w * {index}")
        )
        names.append(str(folder / f"m{index}.py"))
        Path(names[-1]).write_text(source, encoding="utf-8")
    _backdate(folder)
    resolver = Resolver(folder)
    reference = _strip([o.result for o in lint_files(names, resolver, workers=1)])
    lint_files(names, resolver, cache=Cache(folder), workers=1)
    cache_files = sorted([*(folder / CACHE_DIR).glob("*/*.json"), folder / CACHE_DIR / "index.json"])
    pristine = {path: path.read_bytes() for path in cache_files}
    failures = []
    for flip in range(flips):
        path = rng.choice(cache_files)
        data = bytearray(pristine[path])
        spot = rng.randrange(len(data))
        data[spot] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(data))
        served = _strip([o.result for o in lint_files(names, resolver, cache=Cache(folder), workers=1)])
        if served != reference:
            failures.append(f"flip {flip}: bit at {spot} of {path.name} was served")
        for item, content in pristine.items():
            item.write_bytes(content)
    return failures


def main() -> int:
    """Run both campaigns and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--flips", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    with tempfile.TemporaryDirectory(prefix="gradguard-fuzz-") as scratch:
        root = Path(scratch)
        started = time.monotonic()
        failures, used, classes, agreement = hostile_campaign(root, args.files, args.seed, args.batch)
        hostile_s = time.monotonic() - started
        started = time.monotonic()
        flip_failures = flip_campaign(root, args.flips, args.seed)
        flips_s = time.monotonic() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"hostile files: {args.files} (seed {args.seed}), each linted 3 times (no cache, cold, warm): "
        f"{len(failures)} failures, {hostile_s:.0f} s"
    )
    print("  mutations: " + ", ".join(f"{kind} {count}" for kind, count in sorted(used.items())))
    print(f"  file errors: {sum(classes.values())}, by class:")
    for name, count in classes.most_common(15):
        print(f"    {count:6d}  {name}")
    print(
        "  decoding, compared with CPython's compile(): "
        + ", ".join(f"{k} {v}" for k, v in agreement.items())
    )
    print(
        f"cache flips: {args.flips}, each followed by a warm run: {len(flip_failures)} served, {flips_s:.0f} s"
    )
    print(f"peak memory: {peak:.0f} MB")
    for failure in (failures + flip_failures)[:30]:
        print("FAIL", failure)
    return 1 if failures or flip_failures else 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
