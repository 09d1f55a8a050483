"""The project around a linted file: the modules it imports from the same project, found the way
Python finds them, parsed once per process and read lazily by the analysis.

`gradguard lint train.py` alone sees `models.py` beside it: a class or function imported from a
project module is analysed as if it were defined in the linted file (its code run with its own
module's imports), so a model that keeps its state on `self`, a replay buffer or a loss helper that
calls backward is followed into the file that defines it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from gradguard.analysis.reach import MAX_MODULE_BYTES, is_library, locate, project_roots, roots_for
from gradguard.model import Span

# How many project modules one linted file may pull in, transitively.
MAX_MODULES = 24


@dataclass(eq=False)
class ModuleInfo:
    """One project module the analysis read: where it is, its syntax tree and its imports."""

    name: str  # its dotted module name as the importing file wrote it ("models", "pkg.layers")
    path: str
    module: cst.Module
    digest: str
    imports: dict[str, str] = field(default_factory=dict)
    package: str = ""  # the folder relative imports inside it start from
    stars: tuple[str, ...] = ()  # the modules it takes every public name of (`from .model import *`)

    @cached_property
    def _positions(self) -> dict[cst.CSTNode, object]:
        return dict(MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider))

    @cached_property
    def parents(self) -> dict[cst.CSTNode, cst.CSTNode]:
        """Each node's parent in this module."""
        from gradguard.parse import parent_map

        return parent_map(self.module)

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
        self.roots: list[str] = project_roots(self.file, src) if self.file else []

    @property
    def dependencies(self) -> tuple[tuple[str, str], ...]:
        """The project modules read, as (path, content digest): what the result depends on."""
        return tuple(sorted((m.path, m.digest) for m in self.loaded.values() if m is not None))

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
        if is_library(dotted):
            return None
        return self._load(dotted, dotted, roots_for(self.file, self.roots, dotted) if self.file else self.roots,
                          dotted)

    def locate(self, name: str) -> str | None:
        """The file of the project module `name` as the linted file imports it, without reading it."""
        return locate(self.file, self.roots, name) if self.file is not None else None

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


# Texts that stand for project modules instead of what their files hold, by absolute path: the
# modules a fix being checked (or applied round after round by `--fix`) has edited, or an editor's
# unsaved buffers.
_OVERLAY: ContextVar[tuple[tuple[str, str], ...]] = ContextVar("gradguard_module_overlay", default=())


def overlay() -> tuple[tuple[str, str], ...]:
    """The module texts in force, as (absolute path, text) pairs sorted by path."""
    return _OVERLAY.get()


@contextmanager
def overlaid(texts: dict[str, str] | tuple[tuple[str, str], ...]) -> Iterator[None]:
    """Within it, the project modules at these paths read as these texts (on top of the overlay
    already in force)."""
    merged = dict(_OVERLAY.get())
    merged.update(texts.items() if isinstance(texts, dict) else texts)
    token = _OVERLAY.set(tuple(sorted((os.path.abspath(p), t) for p, t in merged.items())))
    try:
        yield
    finally:
        _OVERLAY.reset(token)


def _parse(name: str, path: str) -> ModuleInfo | None:
    """Read and parse one project module; None when it cannot be read, decoded or parsed (the
    analysis then knows nothing of it, as of any library). A module several linted files import is
    parsed once per process while its content stays the same."""
    path = os.path.abspath(path)
    text = dict(_OVERLAY.get()).get(path)
    if text is not None:
        data = text.encode("utf-8")
    else:
        try:
            if os.path.getsize(path) > MAX_MODULE_BYTES:
                return None
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
    key = (name, path, hashlib.sha256(data).hexdigest())
    if key in _PARSED:
        return _PARSED[key]
    if len(_PARSED) >= _MAX_PARSED:
        _PARSED.clear()
    _PARSED[key] = found = _parsed(name, path, data, key[2])
    return found


# Project modules parsed in this process, by name, path and content digest.
_PARSED: dict[tuple[str, str, str], ModuleInfo | None] = {}
_MAX_PARSED = 256


def _parsed(name: str, path: str, data: bytes, digest: str) -> ModuleInfo | None:
    from gradguard.analysis.program import module_imports, star_imports

    try:
        module = cst.parse_module(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, cst.ParserSyntaxError, RecursionError, MemoryError, ValueError):
        return None
    return ModuleInfo(name, path, module, digest, module_imports(module), os.path.dirname(path),
                      star_imports(module))
