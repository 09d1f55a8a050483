"""Where a linted file's imports lead, found without parsing it: the folders Python would search for
its project modules, the files those modules are in, and whether the file calls a helper of theirs
that runs a backward pass.

Cheap by design (regular expressions, `os.stat` and the standard `ast` for imported modules that can
run a backward): the prefilter asks it of every file that calls no backward of its own, and a warm
run must not pay for the parser or the API facts to do so.
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from dataclasses import dataclass
from functools import lru_cache

# Project modules larger than this are not followed (generated code, vendored libraries).
MAX_MODULE_BYTES = 400_000
# How many folders above a file without a project file are looked at for a `src/` layout.
_SRC_LEVELS = 3
_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")

_IMPORTS = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\(?([\w., \t]+)|import[ \t]+([\w., \t]+))", re.MULTILINE)


@dataclass(frozen=True)
class Reach:
    """What a file reaches through its imports: whether it calls an imported helper that runs a
    backward, and the project files that answer depends on (a cached verdict is stale when one
    changes)."""

    runs_backward: bool
    files: tuple[str, ...] = ()


def project_roots(file: str, src: tuple[str, ...] = ()) -> list[str]:
    """The folders a module imported by `file` is searched in, in Python's order for a script run from
    its folder, a package run with `-m`, and a project with a `src/` layout."""
    here = os.path.dirname(file)
    roots = [here]
    # The folder above the outermost package the file is in (`python -m pkg.train`).
    top = here
    while os.path.isfile(os.path.join(top, "__init__.py")):
        top = os.path.dirname(top)
    roots.append(top)
    project = _project_root(here)
    if project is not None:
        roots.append(project)
        roots.append(os.path.join(project, "src"))
        roots.extend(os.path.join(project, s) if not os.path.isabs(s) else s for s in src)
    else:
        # No project file above it (a checkout whose package is installed with `pip install -e`):
        # a `src/` folder of the file's own folder or of a few folders above holds the package.
        current = here
        for _ in range(_SRC_LEVELS):
            roots.append(os.path.join(current, "src"))
            current = os.path.dirname(current)
    unique: list[str] = []
    for root in roots:
        if root not in unique and os.path.isdir(root):
            unique.append(root)
    return unique


def is_library(dotted: str) -> bool:
    """Whether an absolute module name is a library the analysis knows (never a project module)."""
    from gradguard.analysis.knowledge import KNOWN_PACKAGES

    return not dotted or dotted.split(".", 1)[0] in KNOWN_PACKAGES


def roots_for(file: str, roots: list[str], dotted: str) -> list[str]:
    """The folders an absolute import of `dotted` by `file` is searched in: `roots`, then, for a
    package the file itself lies in (`from agents.Base_Agent import ...` in
    `agents/actor_critic_agents/SAC.py`), the folder above it, where Python finds it when the program
    runs from the project's top, whatever files mark that top (none, in a copy without `.git`)."""
    top = dotted.split(".", 1)[0]
    ancestor = os.path.dirname(file)
    while os.path.basename(ancestor) and os.path.basename(ancestor) != top:
        ancestor = os.path.dirname(ancestor)
    above = os.path.dirname(ancestor)
    if top and os.path.basename(ancestor) == top and above not in roots \
            and not os.path.isfile(os.path.join(above, "__init__.py")):
        # (Inside another package, `datasets/` is `data.datasets`, not the `datasets` library.)
        return [*roots, above]
    return roots


def locate(file: str, roots: list[str], name: str) -> str | None:
    """The file of the project module `name` (relative names start with dots) as `file` imports it,
    without reading it."""
    level = len(name) - len(name.lstrip("."))
    dotted = name[level:]
    if level:
        base = os.path.dirname(file)
        for _ in range(level - 1):
            base = os.path.dirname(base)
        roots = [base]
    elif not dotted:
        return None
    parts = dotted.split(".") if dotted else []
    if not level:
        roots = roots_for(file, roots, dotted)
    for root in roots:
        base = os.path.join(root, *parts)
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(candidate) and os.path.abspath(candidate) != file:
                # Asked only once a file is found: most imports name libraries not on disk here.
                if not level and is_library(dotted):
                    return None
                return os.path.abspath(candidate)
    return None


def imported_backward(path: str, source: str) -> Reach:
    """Whether a file calls a function or method, defined in a project module it imports, that runs a
    backward pass itself (`self._perform_update(loss, opt)` of a base class in another file): such a
    file can hold a finding though it calls no backward of its own."""
    file = os.path.abspath(path)
    if _IMPORTS.search(source) is None:
        return Reach(False)
    roots = project_roots(file)
    if not roots:
        return Reach(False)
    names: set[str] = set()
    files: set[str] = set()
    for located in imported_files(file, roots, source):
        behind, consulted = _names_behind(located, *_stamp(located))
        names |= behind
        files |= consulted
    runs = any(re.search(rf"\b{re.escape(name)}\s*\(", source) for name in names)
    return Reach(runs, tuple(sorted(files)))


def runs_imported_backward(path: str, source: str) -> bool:
    """`imported_backward`'s verdict alone."""
    return imported_backward(path, source).runs_backward


@lru_cache(maxsize=4096)
def _names_behind(path: str, mtime_ns: int, size: int) -> tuple[frozenset[str], frozenset[str]]:
    """The functions running a backward that importing `path` gives access to: its own, and those of
    the project modules it imports (a package's `__init__.py` re-exports what its modules define),
    each with the functions of its module that lead to one (`update_G()` calling
    `self.backward_EG()`); with the files read to know it."""
    files = {path}
    imported: set[str] = set()
    text = _text_of(path)
    if text is not None and _IMPORTS.search(text) is not None:
        for located in imported_files(path, project_roots(path), text):
            if located != path:
                files.add(located)
                imported |= _leading_to_backward(located, *_stamp(located), frozenset())
    names = _leading_to_backward(path, mtime_ns, size, frozenset(imported)) | imported
    return frozenset(names), frozenset(files)


def imported_files(file: str, roots: list[str], source: str) -> list[str]:
    """The project files a source text imports, by its import statements."""
    found: list[str] = []
    for match in _IMPORTS.finditer(source):
        frm, imported, plain = match.groups()
        if frm is not None:
            located = locate(file, roots, frm)
            if located is not None:
                found.append(located)
            if located is None or located.endswith("__init__.py"):
                # `from pkg import module`: names of a package may be its submodules.
                for name in imported.split(","):
                    parts = name.split()
                    if parts:
                        sub = locate(file, roots, f"{frm}.{parts[0]}" if frm.strip(".") else f"{frm}{parts[0]}")
                        if sub is not None:
                            found.append(sub)
        else:
            for name in plain.split(","):
                parts = name.split()
                if parts:
                    located = locate(file, roots, parts[0])
                    if located is not None:
                        found.append(located)
    return found


def _text_of(path: str) -> str | None:
    try:
        if os.path.getsize(path) > MAX_MODULE_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _stamp(path: str) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return 0, 0
    return info.st_mtime_ns, info.st_size


@lru_cache(maxsize=4096)
def _calls_of(path: str, mtime_ns: int, size: int) -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    """The functions and methods of a module whose own body runs a backward pass, and for each
    function the names it calls (`f(...)`, `obj.f(...)`), all by name."""
    from gradguard.analysis import might_hold_finding

    if not size or size > MAX_MODULE_BYTES:
        return frozenset(), {}
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        if not might_hold_finding(data):
            return frozenset(), {}
        from gradguard.analysis.screen import calls_backward

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset(), {}
    own: set[str] = set()
    calls: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if calls_backward(node):
            own.add(node.name)
        called = calls.setdefault(node.name, set())
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call):
                func = inner.func
                if isinstance(func, ast.Attribute):
                    called.add(func.attr)
                elif isinstance(func, ast.Name):
                    called.add(func.id)
    return frozenset(own), {name: frozenset(names) for name, names in calls.items()}


@lru_cache(maxsize=4096)
def _leading_to_backward(path: str, mtime_ns: int, size: int, seeds: frozenset[str]) -> frozenset[str]:
    """The functions of a module that run a backward pass, themselves or through the functions they
    call (of this module, or `seeds`: those of the modules it imports), by name."""
    own, calls = _calls_of(path, mtime_ns, size)
    if not calls:
        return own
    leading = set(own)
    known = leading | seeds
    changed = True
    while changed:
        changed = False
        for name, called in calls.items():
            if name not in leading and not called.isdisjoint(known):
                leading.add(name)
                known.add(name)
                changed = True
    return frozenset(leading)


@lru_cache(maxsize=4096)
def _project_root(start: str) -> str | None:
    current = start
    while True:
        if any(os.path.exists(os.path.join(current, marker)) for marker in _MARKERS):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
