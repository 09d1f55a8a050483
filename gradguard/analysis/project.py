"""The project around a linted file: the modules it imports from the same project, found the way
Python finds them, parsed once per process and read lazily by the analysis.

`gradguard lint train.py` alone sees `models.py` beside it: a class or function imported from a
project module is analysed as if it were defined in the linted file (its code run with its own
module's imports), so a model that keeps its state on `self`, a replay buffer or a loss helper that
calls backward is followed into the file that defines it.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import warnings
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from gradguard.analysis.knowledge import KNOWN_PACKAGES
from gradguard.model import Span

# Project modules larger than this are not followed (generated code, vendored libraries).
MAX_MODULE_BYTES = 400_000
# How many project modules one linted file may pull in, transitively.
MAX_MODULES = 24
# How many folders above a file without a project file are looked at for a `src/` layout.
_SRC_LEVELS = 3
_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


@dataclass(eq=False)
class ModuleInfo:
    """One project module the analysis read: where it is, its syntax tree and its imports."""

    name: str  # its dotted module name as the importing file wrote it ("models", "pkg.layers")
    path: str
    module: cst.Module
    digest: str
    imports: dict[str, str] = field(default_factory=dict)
    package: str = ""  # the folder relative imports inside it start from

    @cached_property
    def _positions(self) -> dict[cst.CSTNode, object]:
        return dict(MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider))

    @cached_property
    def parents(self) -> dict[cst.CSTNode, cst.CSTNode]:
        """Each node's parent in this module."""
        found: dict[cst.CSTNode, cst.CSTNode] = {}

        class Collector(cst.CSTVisitor):
            def on_visit(self, node: cst.CSTNode) -> bool:
                for child in node.children:
                    found[child] = node
                return True

        self.module.visit(Collector())
        return found

    def span(self, node: cst.CSTNode) -> Span | None:
        """The span of one of its nodes (None for a node of another module)."""
        position = self._positions.get(node)
        if position is None:
            return None
        start, end = position.start, position.end  # type: ignore[attr-defined]
        return Span.of(start.line, start.column + 1, end.line, end.column + 1)


class Project:
    """Finds and loads the project modules one linted file imports."""

    def __init__(self, path: str | None, src: tuple[str, ...] = ()) -> None:
        self.file = os.path.abspath(path) if path else None
        self.loaded: dict[str, ModuleInfo | None] = {}
        self.roots: list[str] = self._roots(src) if self.file else []

    @property
    def dependencies(self) -> tuple[tuple[str, str], ...]:
        """The project modules read, as (path, content digest): what the result depends on."""
        return tuple(sorted((m.path, m.digest) for m in self.loaded.values() if m is not None))

    def _roots(self, src: tuple[str, ...]) -> list[str]:
        assert self.file is not None
        here = os.path.dirname(self.file)
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

    def module(self, name: str, importer: ModuleInfo | None = None) -> ModuleInfo | None:
        """The project module `name` stands for (relative names start with dots), or None."""
        if self.file is None:
            return None
        level = len(name) - len(name.lstrip("."))
        dotted = name[level:]
        if level:
            base = importer.package if importer is not None else os.path.dirname(self.file)
            for _ in range(level - 1):
                base = os.path.dirname(base)
            key = os.path.join(base, *dotted.split(".")) if dotted else base
            return self._load(key, name, [base], dotted)
        if not dotted or dotted.split(".", 1)[0] in KNOWN_PACKAGES:
            return None
        return self._load(dotted, dotted, self.roots, dotted)

    def locate(self, name: str) -> str | None:
        """The file of the project module `name` as the linted file imports it, without reading it."""
        if self.file is None:
            return None
        level = len(name) - len(name.lstrip("."))
        dotted = name[level:]
        if level:
            base = os.path.dirname(self.file)
            for _ in range(level - 1):
                base = os.path.dirname(base)
            roots = [base]
        elif not dotted or dotted.split(".", 1)[0] in KNOWN_PACKAGES:
            return None
        else:
            roots = self.roots
        parts = dotted.split(".") if dotted else []
        for root in roots:
            base = os.path.join(root, *parts)
            for candidate in (base + ".py", os.path.join(base, "__init__.py")):
                if os.path.isfile(candidate) and os.path.abspath(candidate) != self.file:
                    return os.path.abspath(candidate)
        return None

    def _load(self, key: str, name: str, roots: list[str], dotted: str) -> ModuleInfo | None:
        if key in self.loaded:
            return self.loaded[key]
        self.loaded[key] = None
        if sum(m is not None for m in self.loaded.values()) >= MAX_MODULES:
            return None
        parts = dotted.split(".") if dotted else []
        for root in roots:
            base = os.path.join(root, *parts)
            for candidate in (base + ".py", os.path.join(base, "__init__.py")):
                if os.path.isfile(candidate) and os.path.abspath(candidate) != self.file:
                    info = _parse(name, candidate)
                    self.loaded[key] = info
                    return info
        return None


_IMPORTS = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\(?([\w., \t]+)|import[ \t]+([\w., \t]+))", re.M)


def runs_imported_backward(path: str, source: str) -> bool:
    """Whether a file calls a function or method, defined in a project module it imports, that runs a
    backward pass itself (`self._perform_update(loss, opt)` of a base class in another file): such a
    file can hold a finding though it calls no backward of its own."""
    project = Project(path)
    if not project.roots:
        return False
    names: set[str] = set()
    for located in _imported_files(project, source):
        names |= _names_behind(located, *_stamp(located))
    return any(re.search(rf"\b{re.escape(name)}\s*\(", source) for name in names)


@lru_cache(maxsize=4096)
def _names_behind(path: str, mtime_ns: int, size: int) -> frozenset[str]:
    """The functions running a backward that importing `path` gives access to: its own, and those of
    the project modules it imports (a package's `__init__.py` re-exports what its modules define)."""
    names = set(_backward_functions(path, mtime_ns, size))
    text = _text_of(path)
    if text is not None:
        project = Project(path)
        for located in _imported_files(project, text):
            if located != path:
                names |= _backward_functions(located, *_stamp(located))
    return frozenset(names)


def _imported_files(project: Project, source: str) -> list[str]:
    """The project files a source text imports, by its import statements."""
    found: list[str] = []
    for match in _IMPORTS.finditer(source):
        frm, imported, plain = match.groups()
        if frm is not None:
            located = project.locate(frm)
            if located is not None:
                found.append(located)
            if located is None or located.endswith("__init__.py"):
                # `from pkg import module`: names of a package may be its submodules.
                for name in imported.split(","):
                    parts = name.split()
                    if parts:
                        sub = project.locate(f"{frm}.{parts[0]}" if frm.strip(".") else f"{frm}{parts[0]}")
                        if sub is not None:
                            found.append(sub)
        else:
            for name in plain.split(","):
                parts = name.split()
                if parts:
                    located = project.locate(parts[0])
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
def _backward_functions(path: str, mtime_ns: int, size: int) -> frozenset[str]:
    """The functions and methods of a module whose own body runs a backward pass (by name)."""
    from gradguard.analysis import might_hold_finding
    from gradguard.analysis.screen import calls_backward

    if not size or size > MAX_MODULE_BYTES:
        return frozenset()
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        if not might_hold_finding(data):
            return frozenset()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    return frozenset(node.name for node in ast.walk(tree)
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and calls_backward(node))


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


def _parse(name: str, path: str) -> ModuleInfo | None:
    """Read and parse one project module; None when it cannot be read, decoded or parsed (the
    analysis then knows nothing of it, as of any library)."""
    from gradguard.analysis.program import module_imports

    try:
        if os.path.getsize(path) > MAX_MODULE_BYTES:
            return None
        with open(path, "rb") as handle:
            data = handle.read()
        text = data.decode("utf-8-sig")
        module = cst.parse_module(text)
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError, RecursionError, MemoryError, ValueError):
        return None
    return ModuleInfo(name, os.path.abspath(path), module, hashlib.sha256(data).hexdigest(),
                      module_imports(module), os.path.dirname(os.path.abspath(path)))
