"""Which files to lint: `.py` and `.ipynb` files found recursively, minus what is excluded or git-ignored.

Explicit paths are linted even when excluded, unless `force_exclude` (pre-commit passes explicit paths).
Folders walked recursively honour `exclude`/`extend-exclude` of the settings that apply to them and every
`.gitignore` from the enclosing git repository's root down (nested ones included, the deepest match
deciding, like git). Symbolic links to folders are not followed (no loops); a broken or looping link, an
unreadable folder or a missing path becomes a `FileError`, never an exception.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gradguard.model import FileError

if TYPE_CHECKING:
    import pathspec

    from gradguard.config import Resolver, Settings

SUFFIXES = (".py", ".ipynb")


@dataclass(frozen=True)
class Discovered:
    """The files to lint, in a stable order, and the paths that could not be used."""

    files: tuple[str, ...]
    errors: tuple[FileError, ...]


@dataclass(frozen=True)
class _Ignore:
    base: str  # absolute folder holding the .gitignore
    spec: pathspec.GitIgnoreSpec
    # Every pattern of the spec in one regex: a path it does not match is decided at once (most paths);
    # pathspec tries the patterns one by one (diffusers' 101 patterns: 0.5 s of a 2,089-file warm run).
    any_pattern: re.Pattern[str] | None = None


def describe_os_error(exc: OSError) -> str:
    """One clear line for an OS error on a path the user gave or that was found."""
    if exc.errno == errno.ELOOP:
        return "symbolic link loop"
    if exc.errno == errno.ENOENT:
        return "no such file or directory"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return exc.strerror or str(exc)


def _link_problem(path: str) -> str | None:
    """Why a path that exists as a link cannot be followed, or None when it can."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
        if exc.errno == errno.ENOENT:
            return f"broken symbolic link (target {os.readlink(path)!r} does not exist)"
        return describe_os_error(exc)
    return None


class WalkMemo(Protocol):
    """Where a folder's walk is remembered between runs (the cache): its files, and what they depend on."""

    def recall(self, top: str) -> list[str] | None:
        """The files of the walk of `top`, when nothing it depends on changed since; else None."""

    def remember(self, top: str, files: list[str], depends: dict[str, Any]) -> None:
        """Keep a walk of `top`: `depends` maps each folder walked and file read to what it looked like."""


def discover(
    paths: list[str], resolver: Resolver, *, force_exclude: bool = False, memo: WalkMemo | None = None
) -> Discovered:
    """Expand the command-line paths into the files to lint (a folder's walk recalled from `memo` when
    no folder in it, .gitignore or configuration file changed)."""
    files: dict[str, None] = {}
    errors: list[FileError] = []
    for raw in paths:
        path = os.path.normpath(raw)
        if not os.path.lexists(path):
            errors.append(FileError(path, "no such file or directory"))
            continue
        if os.path.islink(path):
            problem = _link_problem(path)
            if problem is not None:
                errors.append(FileError(path, problem))
                continue
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            errors.append(FileError(path, describe_os_error(exc)))
            continue
        is_dir = stat.S_ISDIR(mode)
        if force_exclude and _excluded_explicit(path, is_dir, resolver):
            continue
        if is_dir:
            recalled = memo.recall(path) if memo is not None else None
            if recalled is not None:
                files.update(dict.fromkeys(recalled))
                continue
            walker = _Walker(resolver, files, errors)
            walked = walker.walk(path)
            if memo is not None and walker.depends is not None:
                memo.remember(path, walked, walker.depends | _config_stamps(resolver))
        else:
            files.setdefault(path, None)
    return Discovered(tuple(files), tuple(errors))


def _excluded_explicit(path: str, is_dir: bool, resolver: Resolver) -> bool:
    """True when an explicit path, or a folder above it, is excluded or git-ignored."""
    absolute = os.path.abspath(path)
    settings = resolver.for_path(absolute)
    if settings.is_excluded(absolute, is_dir):
        return True
    parent = os.path.dirname(absolute)
    while True:
        relative = settings.relative(parent)
        if relative is None or relative == ".":
            break
        if settings.is_excluded(parent, True):
            return True
        parent = os.path.dirname(parent)
    ignores = _ancestor_ignores(absolute)
    current = absolute
    while ignores:
        if _git_ignored(current, current != absolute or is_dir, ignores):
            return True
        current = os.path.dirname(current)
        ignores = [ignore for ignore in ignores if _is_below(current, ignore.base) and current != ignore.base]
    return False


def _is_below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class _Walker:
    """One recursive walk: the .gitignore stack and the settings of each folder.

    When the folder given is itself excluded or git-ignored, the user asked for it anyway: patterns are
    then matched below it (relative to it), and the .gitignore files above it do not apply.
    """

    def __init__(self, resolver: Resolver, files: dict[str, None], errors: list[FileError]) -> None:
        self.resolver = resolver
        self.files = files
        self.errors = errors
        self.anchor: str | None = None
        # What the walk's result depends on: each folder listed (its mtime: an entry added, removed or
        # renamed moves it) and each file read, by absolute path; None once the walk met something a
        # folder's mtime does not follow (a symbolic link, an error).
        self.depends: dict[str, Any] | None = {}

    def walk(self, top: str) -> list[str]:
        """Add the files under `top` and return them, in order."""
        absolute = os.path.abspath(top)
        if self.depends is not None:
            self.depends.update(_ancestor_stamps(absolute))
        ignores = _ancestor_ignores(absolute)
        if _excluded_explicit(top, True, self.resolver):
            self.anchor = absolute
            ignores = []
        # An explicit stack, not recursion: a tree nested deeper than Python's recursion limit is walked
        # too. Sorting the paths found by their parts gives the order of a recursive walk of sorted folders.
        found: list[str] = []
        pending = [(top, absolute, ignores)]
        while pending:
            pending.extend(reversed(self._walk_dir(*pending.pop(), found)))
        walked = sorted(found, key=lambda path: path.split(os.sep))
        for path in walked:
            self.files.setdefault(path, None)
        return walked

    def _walk_dir(
        self, directory: str, absolute: str, ignores: list[_Ignore], found: list[str]
    ) -> list[tuple[str, str, list[_Ignore]]]:
        """Add the files of one folder to `found`; returns its subfolders to walk."""
        own = _read_gitignore(absolute)
        if own is not None:
            ignores = [*ignores, own]
        if self.depends is not None:
            self.depends[absolute] = stamp(absolute)
            if own is not None:
                self.depends[os.path.join(absolute, ".gitignore")] = stamp(os.path.join(absolute, ".gitignore"))
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as exc:
            self.errors.append(FileError(directory, f"cannot list the folder: {describe_os_error(exc)}"))
            self.depends = None
            return []
        settings = self.resolver.for_dir(absolute)
        prefix = "" if directory == os.curdir else directory + os.sep
        subfolders = []
        for entry in entries:
            name = entry.name
            path = prefix + name
            child = os.path.join(absolute, name)
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if name == ".git" or self._ignored(child, True, ignores, settings):
                    continue
                subfolders.append((path, child, ignores))
                continue
            if name in _CONFIG_NAMES and self.depends is not None:
                self.depends[child] = stamp(child)  # edited, it may exclude files (or become a config)
            if not name.endswith(SUFFIXES):
                continue
            if self._ignored(child, False, ignores, settings):
                continue
            if is_link:
                self.depends = None  # where a link points can change without its folder changing
                problem = _link_problem(child)
                if problem is not None:
                    self.errors.append(FileError(path, problem))
                    continue
                if os.path.isdir(child):
                    continue
            found.append(path)
        return subfolders

    def _ignored(self, absolute: str, is_dir: bool, ignores: list[_Ignore], settings: Settings) -> bool:
        if settings.is_excluded(absolute, is_dir, self.anchor):
            return True
        return _git_ignored(absolute, is_dir, ignores)


def _git_ignored(absolute: str, is_dir: bool, ignores: list[_Ignore]) -> bool:
    """git's rule: the deepest .gitignore with a matching pattern decides (a `!` pattern re-includes)."""
    for ignore in reversed(ignores):
        base = ignore.base.rstrip(os.sep) + os.sep
        if not absolute.startswith(base):
            continue
        relative = absolute[len(base) :].replace(os.sep, "/")
        if is_dir:
            relative += "/"
        if ignore.any_pattern is not None and ignore.any_pattern.match(relative) is None:
            continue
        result = ignore.spec.check_file(relative)
        if result.include is not None:
            return bool(result.include)
    return False


def _read_gitignore(directory: str) -> _Ignore | None:
    path = os.path.join(directory, ".gitignore")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    return _Ignore(directory, spec, _any_pattern(spec))


_ANY_FOLDER = "^(?:.+/)?"


def _any_pattern(spec: pathspec.GitIgnoreSpec) -> re.Pattern[str] | None:
    """One regex that matches a path when any pattern of `spec` does (None when they cannot be joined).

    pathspec's patterns are anchored regexes; most begin "at any folder" (`^(?:.+/)?`), which is
    factored out so that the joined regex tries the folders of a path once, not once per pattern."""
    anywhere: list[str] = []
    rooted: list[str] = []
    flags = set()
    for pattern in spec.patterns:
        if getattr(pattern, "include", None) is None:
            continue  # a blank line or a comment
        regex = getattr(pattern, "regex", None)
        if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str) or "(?P=" in regex.pattern:
            return None
        if not regex.pattern.startswith("^"):
            return None  # anchored patterns only: then matching at the start is all a search would find
        # The patterns' own named groups would clash once joined; none of them is referred back to.
        source = re.sub(r"\(\?P<\w+>", "(?:", regex.pattern)
        if source.startswith(_ANY_FOLDER):
            anywhere.append(f"(?:{source[len(_ANY_FOLDER):]})")
        else:
            rooted.append(f"(?:{source[1:]})")
        flags.add(regex.flags)
    if len(flags) > 1:
        return None
    branches = ([f"(?:.+/)?(?:{'|'.join(anywhere)})"] if anywhere else []) + rooted
    try:
        return re.compile(f"^(?:{'|'.join(branches) or '(?!)'})", flags.pop() if flags else 0)
    except re.error:
        return None


def stamp(path: str) -> list[int] | None:
    """What a walk remembers of a path: [size, mtime_ns], or None when it does not exist."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns]


_CONFIG_NAMES = ("pyproject.toml", "gradguard.toml")


def _ancestor_stamps(top: str) -> dict[str, Any]:
    """The files above `top` a walk's result depends on, present or not: `.git` (where the repository
    starts), `.gitignore`, and the configuration files the settings may come from."""
    found: dict[str, Any] = {}
    current = os.path.dirname(top)
    while True:
        for name in (".git", ".gitignore", *_CONFIG_NAMES):
            path = os.path.join(current, name)
            found[path] = stamp(path)
        parent = os.path.dirname(current)
        if parent == current:
            return found
        current = parent


def _config_stamps(resolver: Resolver) -> dict[str, Any]:
    """The configuration files whose settings the walk applied (edited, they may exclude other files)."""
    found: dict[str, Any] = {}
    for settings in resolver.all_settings():
        if settings.config_path is not None:
            path = os.path.abspath(settings.config_path)
            found[path] = stamp(path)
    return found


def _ancestor_ignores(top: str) -> list[_Ignore]:
    """The .gitignore files above `top`, up to the root of its git repository (none outside one)."""
    chain: list[str] = []
    current = os.path.dirname(top)
    inside_repo = os.path.exists(os.path.join(top, ".git"))
    while not inside_repo:
        chain.append(current)
        if os.path.exists(os.path.join(current, ".git")):
            inside_repo = True
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    if not inside_repo:
        return []
    found = [_read_gitignore(directory) for directory in reversed(chain)]
    return [ignore for ignore in found if ignore is not None]


def is_notebook(path: str) -> bool:
    """True for a Jupyter notebook (by its name, as Jupyter does)."""
    return path.endswith(".ipynb")
