"""`[tool.gradguard]` settings: found walking up from each path, validated once into a frozen `Settings`.

A configuration lives in the nearest `gradguard.toml` (its table at the top level or under
`[tool.gradguard]`) or `pyproject.toml` holding a `[tool.gradguard]` table. Keys are kebab-case, like
ruff's: `select`, `ignore`, `extend-select`, `per-file-ignores`, `exclude`, `extend-exclude`,
`output-format`. Rules are selected by code prefix (`GG0` selects every GG0xx rule, `GG` all of them).
Command-line flags form a last layer on top of the file. Anything wrong is a `ConfigError` naming the
file, the key and what was expected.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pathspec

    from gradguard.analysis.api.facts import Fact

OUTPUT_FORMATS = (
    "concise",
    "full",
    "json",
    "json-lines",
    "github",
    "gitlab",
    "junit",
    "pylint",
    "rdjson",
    "sarif",
)

# ruff's default exclusions, plus gradguard's own cache.
DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".gradguard_cache",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

_KEYS = (
    "select",
    "ignore",
    "extend-select",
    "per-file-ignores",
    "exclude",
    "extend-exclude",
    "output-format",
    "api",
)
_CODE_KEYS = ("select", "ignore", "extend-select")
_PATTERN_KEYS = ("exclude", "extend-exclude")


class ConfigError(Exception):
    """The configuration is unusable; the message names the file, the key and what was expected."""


@dataclass(frozen=True)
class Selection:
    """What the settings say for one file: which rule codes are on (resolved selectors) and what the
    project declares about its own helpers; free of paths (cheap to pickle)."""

    select: tuple[str, ...]
    ignore: tuple[str, ...]
    cli_select: tuple[str, ...] | None = None
    cli_extend_select: tuple[str, ...] = ()
    cli_ignore: tuple[str, ...] = ()
    file_ignore: tuple[str, ...] = ()
    # What the project's own helpers do ([tool.gradguard.api]): the analysis reads them, and the
    # cache's fingerprint (this selection's repr) changes with them.
    api: tuple[Fact, ...] = ()

    def enabled(self, code: str) -> bool:
        """True when a finding with this code is reported."""
        if self.cli_select is not None:
            on = _matches(code, self.cli_select)
        else:
            on = _most_specific_wins(code, self.select, self.ignore)
        if _matches(code, self.cli_extend_select):
            on = True
        if _matches(code, self.cli_ignore) or _matches(code, self.file_ignore):
            on = False
        return on

    def fingerprint(self) -> str:
        """A stable text that changes whenever the selection may change a file's findings."""
        return repr(self)


@dataclass(frozen=True)
class CliOverrides:
    """Rule selection and output options given on the command line (they beat the file)."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    output_format: str | None = None


@dataclass(frozen=True)
class Settings:
    """The validated configuration that applies to the files under `root`."""

    root: Path
    config_path: Path | None = None
    select: tuple[str, ...] = ("GG",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    output_format: str | None = None
    api: tuple[Fact, ...] = ()  # the project's own helpers, from [tool.gradguard.api]
    cli: CliOverrides = field(default_factory=CliOverrides)

    def rule_enabled(self, code: str, path: str | os.PathLike[str]) -> bool:
        """True when findings of `code` in the file at `path` are reported (select/ignore/per-file)."""
        return self.selection(path).enabled(code)

    def selection(self, path: str | os.PathLike[str]) -> Selection:
        """The rule selection for one file, with its per-file ignores resolved."""
        if not self.per_file_ignores:
            return self._plain_selection
        file_ignore: list[str] = []
        relative = self.relative(path)
        for (_, codes), spec in zip(self.per_file_ignores, self._per_file_specs, strict=True):
            if relative is not None and spec.match_file(relative):
                file_ignore.extend(codes)
        return replace(self._plain_selection, file_ignore=tuple(file_ignore))

    @cached_property
    def _plain_selection(self) -> Selection:
        return Selection(
            select=self.select + self.extend_select,
            ignore=self.ignore,
            cli_select=self.cli.select,
            cli_extend_select=self.cli.extend_select,
            cli_ignore=self.cli.ignore,
            api=self.api,
        )

    @property
    def effective_output_format(self) -> str:
        """The output format: the command line's, else the file's, else `concise`."""
        return self.cli.output_format or self.output_format or "concise"

    def relative(self, path: str | os.PathLike[str]) -> str | None:
        """`path` relative to `root` with forward slashes, or None when it lies outside `root`."""
        relative = os.path.relpath(os.path.abspath(path), self.root)
        if relative == ".." or relative.startswith(".." + os.sep):
            return None
        return relative.replace(os.sep, "/")

    def is_excluded(self, path: str | os.PathLike[str], is_dir: bool, anchor: str | None = None) -> bool:
        """True when `exclude`/`extend-exclude` matches the path (a folder's contents are not checked).

        Patterns are relative to `root`; a path outside it is matched by its name. With `anchor` (a
        folder given explicitly although excluded), paths below it are matched relative to it instead,
        so that the folder's own name does not exclude everything inside it.
        """
        absolute = os.path.abspath(path)
        names, folder_names, spec = self._exclude_plan
        name = os.path.basename(absolute)
        if name in names or (is_dir and name in folder_names):
            return True
        if spec is None:
            return False
        relative = self.relative(absolute)
        if anchor is not None and (relative is None or not _is_below(str(self.root), anchor)):
            inside = os.path.relpath(absolute, anchor)
            if not inside.startswith(".."):
                relative = inside.replace(os.sep, "/")
        if relative is None or relative == ".":
            relative = name
        if is_dir:
            relative += "/"
        return spec.match_file(relative)

    @cached_property
    def _exclude_plan(self) -> tuple[frozenset[str], frozenset[str], pathspec.GitIgnoreSpec | None]:
        """Plain names (`build`, `.venv/`) are matched with a set; only other patterns need pathspec."""
        patterns = [p.strip() for p in self.exclude + self.extend_exclude]
        patterns = [p for p in patterns if p and not p.startswith("#")]
        if any(p.startswith("!") for p in patterns):
            return frozenset(), frozenset(), _gitignore_spec(patterns)
        names: set[str] = set()
        folder_names: set[str] = set()
        rest: list[str] = []
        for pattern in patterns:
            core = pattern.removesuffix("/")
            if core and not any(char in core for char in "/*?[]\\"):
                (folder_names if pattern.endswith("/") else names).add(core)
            else:
                rest.append(pattern)
        return frozenset(names), frozenset(folder_names), _gitignore_spec(rest) if rest else None

    @cached_property
    def _per_file_specs(self) -> tuple[pathspec.GitIgnoreSpec, ...]:
        return tuple(_gitignore_spec([pattern]) for pattern, _ in self.per_file_ignores)


def _gitignore_spec(patterns: list[str]) -> pathspec.GitIgnoreSpec:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def _is_below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _matches(code: str, selectors: Iterable[str]) -> bool:
    return any(code.startswith(selector) for selector in selectors)


def _most_specific_wins(code: str, select: tuple[str, ...], ignore: tuple[str, ...]) -> bool:
    """ruff's rule: the longest matching selector decides; on a tie, ignore wins."""
    best_select = max((len(s) for s in select if code.startswith(s)), default=-1)
    best_ignore = max((len(s) for s in ignore if code.startswith(s)), default=-1)
    return best_select > best_ignore


def known_codes() -> tuple[str, ...]:
    """Every rule code of the catalogue."""
    from gradguard import catalogue

    return tuple(catalogue.load())


def check_selectors(selectors: Iterable[str], where: str, known: Iterable[str]) -> tuple[str, ...]:
    """Normalise rule selectors (upper case, `ALL` = every rule) and reject unknown ones."""
    known = tuple(known)
    out: list[str] = []
    for raw in selectors:
        selector = raw.strip().upper()
        if selector == "ALL":
            selector = "GG"
        if not selector or not any(code.startswith(selector) for code in known):
            expected = f"{known[0]}..{known[-1]}" if known else "none: the rule catalogue is empty"
            raise ConfigError(
                f"{where}: unknown rule code or prefix {raw!r} "
                f"(expected a rule code or a prefix of one, such as 'GG' or 'GG001'; known codes: {expected})"
            )
        out.append(selector)
    return tuple(out)


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"


def _string_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: expected a list of strings, got {_describe(value)}")
    return tuple(value)


def parse_table(table: Mapping[str, Any], path: Path, header: str, known: Iterable[str]) -> Settings:
    """Validate one `[tool.gradguard]` table read from `path` into `Settings`."""
    known = tuple(known)
    for key in table:
        if key not in _KEYS:
            hint = ""
            import difflib

            close = difflib.get_close_matches(key.replace("_", "-"), _KEYS, n=1)
            if close:
                hint = f"; did you mean '{close[0]}'?"
            raise ConfigError(
                f"{path}: {header} unknown key '{key}' (expected one of: {', '.join(_KEYS)}){hint}"
            )
    values: dict[str, Any] = {"root": Path(os.path.abspath(path.parent)), "config_path": path}
    for key in _CODE_KEYS:
        if key in table:
            where = f"{path}: {header} {key}"
            values[key.replace("-", "_")] = check_selectors(_string_list(table[key], where), where, known)
    for key in _PATTERN_KEYS:
        if key in table:
            values[key.replace("-", "_")] = _string_list(table[key], f"{path}: {header} {key}")
    if "per-file-ignores" in table:
        values["per_file_ignores"] = _per_file_ignores(table["per-file-ignores"], path, header, known)
    if "output-format" in table:
        fmt = table["output-format"]
        if fmt not in OUTPUT_FORMATS:
            raise ConfigError(
                f"{path}: {header} output-format: expected one of {', '.join(OUTPUT_FORMATS)}, "
                f"got {_describe(fmt)}"
            )
        values["output_format"] = fmt
    if "api" in table:
        values["api"] = parse_api_table(table["api"], path, header)
    return Settings(**values)


# [tool.gradguard.api]: what a project's own helpers do, as API facts. Each key lists qualified names.
API_KEYS = ("detaches", "calls-backward", "fresh", "keeps-state")


def _api_fact(key: str, name: str) -> Fact:
    """The fact one `[tool.gradguard.api]` entry declares."""
    # Imported here: most projects declare nothing, and a warm run need not load the facts' module.
    from gradguard.analysis.api.facts import Backward, Fact, Returns, Role

    if key == "detaches":  # `repackage_hidden(h)`: a copy of its argument without the graph
        return Fact(name, returns=Returns.CUT, cuts=Role.RESULT, source="config")
    if key == "calls-backward":  # `engine.step(loss)`: runs loss.backward() inside
        return Fact(name, backward=Backward.BACKWARD, root=Role.ARGUMENT, returns=Returns.NONE, source="config")
    if key == "fresh":  # `make_noise(shape)`: a new tensor with no graph
        return Fact(name, returns=Returns.FRESH, source="config")
    # keeps-state: `meter.update(loss)` keeps what it is given (graph included) from call to call
    return Fact(name, stores=Role.ARGUMENTS, source="config")


def parse_api_table(value: Any, path: Path, header: str) -> tuple[Fact, ...]:
    """Validate `[tool.gradguard.api]` (`[api]` at the top level of gradguard.toml) into facts."""
    where = f"{path}: {'[tool.gradguard.api]' if header == '[tool.gradguard]' else '[api]'}"
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a table of {' / '.join(API_KEYS)} = [qualified names], "
                          f"got {_describe(value)}")
    seen: dict[str, str] = {}
    out: list[Fact] = []
    for key, names in value.items():
        if key not in API_KEYS:
            import difflib

            close = difflib.get_close_matches(key.replace("_", "-"), API_KEYS, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ConfigError(f"{where}: unknown key '{key}' (expected one of: {', '.join(API_KEYS)}){hint}")
        for name in _string_list(names, f"{where} {key}"):
            if not all(part.isidentifier() for part in name.split(".")):
                raise ConfigError(f"{where} {key}: {name!r} is not a qualified name "
                                  "(expected dotted Python names such as 'utils.repackage_hidden')")
            if name in seen and seen[name] != key:
                raise ConfigError(f"{where} {key}: {name!r} is also listed under {seen[name]}")
            if name not in seen:
                seen[name] = key
                out.append(_api_fact(key, name))
    return tuple(out)


def _per_file_ignores(
    value: Any, path: Path, header: str, known: tuple[str, ...]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    where = f"{path}: {header} per-file-ignores"
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a table of pattern = [rule codes], got {_describe(value)}")
    out = []
    for pattern, codes in value.items():
        entry = f"{where} {pattern!r}"
        out.append((pattern, check_selectors(_string_list(codes, entry), entry, known)))
    return tuple(out)


def read_config(path: Path, known: Iterable[str]) -> Settings | None:
    """Settings from one config file; None for a pyproject.toml without `[tool.gradguard]`."""
    found = _section(path)
    if found is None:
        return None
    section, header = found
    return parse_table(section, path, header, known)


def project_api(start: str | os.PathLike[str]) -> tuple[Fact, ...]:
    """The `[tool.gradguard.api]` facts of the configuration nearest `start` (a folder), found as the
    lint finds it; only that table is read and checked (the runtime monitor needs nothing else)."""
    directory = os.path.abspath(start)
    while True:
        for name in ("gradguard.toml", "pyproject.toml"):
            candidate = Path(directory, name)
            if candidate.is_file():
                found = _section(candidate)
                if found is not None:
                    section, header = found
                    return parse_api_table(section["api"], candidate, header) if "api" in section else ()
        parent = os.path.dirname(directory)
        if parent == directory:
            return ()
        directory = parent


def _section(path: Path) -> tuple[dict[str, Any], str] | None:
    """gradguard's table of one config file and how messages name it; None for a pyproject.toml
    without `[tool.gradguard]`."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses into nested arrays and inline tables
        raise ConfigError(f"{path}: invalid TOML: arrays or tables nested too deeply") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the configuration: {_reason(exc)}") from None
    tool = data.get("tool")
    section = tool.get("gradguard") if isinstance(tool, dict) else None
    if path.name == "pyproject.toml" or section is not None:
        if section is None:
            return None
        header = "[tool.gradguard]"
    else:
        section, header = data, "(top level)"
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.gradguard] expected a table, got {_describe(section)}")
    return section, header


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


class Resolver:
    """Finds the settings that apply to each path, reading every config file once.

    `config` (the `--config FILE` option) replaces discovery: it applies to every path. `known` (the
    rule codes) defaults to the catalogue's.
    """

    def __init__(
        self,
        cwd: Path,
        cli: CliOverrides | None = None,
        config: Path | None = None,
        known: tuple[str, ...] | None = None,
    ) -> None:
        self.cwd = Path(os.path.abspath(cwd))
        self.cli = cli or CliOverrides()
        self._known = known
        self._by_dir: dict[str, Settings] = {}
        self._by_given_dir: dict[str, Settings] = {}
        self._forced: Settings | None = None
        if self.cli.output_format is not None and self.cli.output_format not in OUTPUT_FORMATS:
            raise ConfigError(
                f"--output-format: expected one of {', '.join(OUTPUT_FORMATS)}, "
                f"got {self.cli.output_format!r}"
            )
        if config is not None:
            config = Path(os.path.abspath(self.cwd / config))
            if not config.is_file():
                raise ConfigError(f"--config {config}: no such file")
            settings = read_config(config, self.known) or Settings(root=config.parent, config_path=config)
            self._forced = self._with_cli(settings)

    @property
    def known(self) -> tuple[str, ...]:
        """Known rule codes (read from the catalogue on first use)."""
        if self._known is None:
            self._known = known_codes()
        return self._known

    def _with_cli(self, settings: Settings) -> Settings:
        return replace(settings, cli=self.cli)

    def for_path(self, path: str | os.PathLike[str]) -> Settings:
        """The settings of the nearest config walking up from `path` (a file or a folder)."""
        absolute = os.path.abspath(path)
        return self.for_dir(absolute if os.path.isdir(absolute) else os.path.dirname(absolute))

    def for_file(self, path: str) -> Settings:
        """The settings for a file (no check that it is one)."""
        folder = os.path.dirname(path)
        found = self._by_given_dir.get(folder)
        if found is None:
            found = self._by_given_dir[folder] = self.for_dir(os.path.dirname(os.path.abspath(path)))
        return found

    def for_dir(self, directory: str) -> Settings:
        """The settings for an absolute folder path."""
        if self._forced is not None:
            return self._forced
        # Up the tree in a loop, not by recursion: a folder may be nested deeper than the recursion limit.
        visited: list[str] = []
        settings = self._by_dir.get(directory)
        while settings is None:
            visited.append(directory)
            settings = self._read_dir(directory)
            if settings is None:
                parent = os.path.dirname(directory)
                if parent == directory:
                    settings = self._with_cli(Settings(root=self.cwd))
                else:
                    directory = parent
                    settings = self._by_dir.get(directory)
        for folder in visited:
            self._by_dir[folder] = settings
        return settings

    def _read_dir(self, directory: str) -> Settings | None:
        for name in ("gradguard.toml", "pyproject.toml"):
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                settings = read_config(Path(candidate), self.known)
                if settings is not None:
                    return self._with_cli(settings)
        return None

    def all_settings(self) -> tuple[Settings, ...]:
        """Every distinct settings object handed out so far."""
        seen: dict[int, Settings] = {}
        for settings in [self._forced, *self._by_dir.values()]:
            if settings is not None:
                seen.setdefault(id(settings), settings)
        return tuple(seen.values())


def parse_cli_codes(value: str | None, option: str, known: Iterable[str]) -> tuple[str, ...] | None:
    """Parse a comma-separated `--select`-style option (None when not given)."""
    if value is None:
        return None
    parts = [part for part in value.split(",") if part.strip()]
    return check_selectors(parts, option, known)


def check_per_file_patterns(settings: Settings, files: Iterable[str]) -> list[str]:
    """Warnings for the per-file-ignores patterns that match no file under the settings' root.

    A warning, not an error: a pattern for files not written yet, or a hook run on a few files, must not
    stop the run. The linted files are tried first; only a pattern none of them matches costs a walk of
    the tree (gradguard's default excludes, such as `.venv` and `build`, are not searched).
    """
    if not settings.per_file_ignores:
        return []
    pending = dict(enumerate(settings._per_file_specs))
    relatives = [rel for rel in (settings.relative(f) for f in files) if rel is not None]
    for index, spec in list(pending.items()):
        if any(spec.match_file(rel) for rel in relatives):
            del pending[index]
    folders = [str(settings.root)] if pending else []
    while folders:  # a loop, not os.walk: Python 3.11's os.walk recurses once per folder level
        dirpath = folders.pop()
        try:
            with os.scandir(dirpath) as scan:
                entries = [(entry.name, entry.is_dir(), entry.is_symlink()) for entry in scan]
        except OSError:
            continue
        base = os.path.relpath(dirpath, settings.root).replace(os.sep, "/")
        prefix = "" if base == "." else base + "/"
        dirnames = [name for name, is_dir, _ in entries if is_dir and name not in DEFAULT_EXCLUDE]
        names = [prefix + d + "/" for d in dirnames] + [
            prefix + name for name, is_dir, _ in entries if not is_dir
        ]
        for index, spec in list(pending.items()):
            if any(spec.match_file(name) for name in names):
                del pending[index]
        if not pending:
            return []
        folders.extend(
            os.path.join(dirpath, name)
            for name, is_dir, link in entries
            if is_dir and not link and name not in DEFAULT_EXCLUDE
        )
    return [
        f"{settings.config_path}: [tool.gradguard] per-file-ignores: the pattern "
        f"{settings.per_file_ignores[index][0]!r} matches no file under {settings.root} (a gitignore-style "
        f"pattern relative to that folder; folders gradguard never lints, such as .venv and build, are "
        f"not searched)"
        for index in pending
    ]
