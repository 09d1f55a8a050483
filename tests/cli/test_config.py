"""`[tool.gradguard]`: discovery walking up, validation errors (exit 2 naming file and key), selection."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import GG001_ROW, GG001_SOURCE, Project

from gradguard.config import ConfigError, Resolver, Settings, read_config

KNOWN = ("GG001", "GG002", "GG003", "GG009", "GG010")


def _settings(tmp_path: Path, body: str, name: str = "pyproject.toml") -> Settings:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    settings = read_config(path, KNOWN)
    assert settings is not None
    return settings


@pytest.mark.parametrize(
    ("body", "key", "expected"),
    [
        ("[tool.gradguard]\nselct = ['GG']\n", "selct", "did you mean 'select'"),
        ("[tool.gradguard]\nselect = 'GG001'\n", "select", "expected a list of strings"),
        ("[tool.gradguard]\nignore = [1]\n", "ignore", "expected a list of strings"),
        (
            "[tool.gradguard]\nextend-select = ['GG999']\n",
            "extend-select",
            "unknown rule code or prefix 'GG999'",
        ),
        ("[tool.gradguard]\nselect = ['E501']\n", "select", "unknown rule code or prefix 'E501'"),
        ("[tool.gradguard]\noutput-format = 'xml'\n", "output-format", "expected one of concise, full, json"),
        ("[tool.gradguard]\nexclude = 'build'\n", "exclude", "expected a list of strings"),
        ("[tool.gradguard]\nper-file-ignores = ['x']\n", "per-file-ignores", "expected a table"),
        (
            "[tool.gradguard.per-file-ignores]\n'tests/*' = ['GG7']\n",
            "per-file-ignores 'tests/*'",
            "unknown rule code or prefix 'GG7'",
        ),
    ],
)
def test_a_bad_key_is_named_with_what_was_expected(
    tmp_path: Path, body: str, key: str, expected: str
) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_config(path, KNOWN)
    message = str(info.value)
    assert str(path) in message
    assert key in message
    assert expected in message


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "gradguard.toml"
    path.write_text("select = [GG001\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid TOML") as info:
        read_config(path, KNOWN)
    assert str(path) in str(info.value)


def test_gradguard_toml_table_may_be_top_level_or_tool_gradguard(tmp_path: Path) -> None:
    top = _settings(tmp_path, "select = ['GG001']\n", "gradguard.toml")
    assert top.select == ("GG001",)
    nested = _settings(tmp_path, "[tool.gradguard]\nignore = ['GG002']\n", "gradguard.toml")
    assert nested.ignore == ("GG002",)


def test_pyproject_without_the_table_is_not_a_config(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.ruff]\nline-length = 100\n", encoding="utf-8")
    assert read_config(path, KNOWN) is None


def test_selection_by_prefix_and_the_most_specific_selector_wins(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path, "[tool.gradguard]\nselect = ['GG0']\nignore = ['GG00']\nextend-select = ['GG001']\n"
    )
    assert settings.rule_enabled("GG001", tmp_path / "a.py")
    assert not settings.rule_enabled("GG002", tmp_path / "a.py")
    assert settings.rule_enabled("GG010", tmp_path / "a.py")
    all_rules = _settings(tmp_path, "[tool.gradguard]\nselect = ['ALL']\n")
    assert all(all_rules.rule_enabled(code, "x.py") for code in KNOWN)


def test_per_file_ignores_use_gitignore_patterns_relative_to_the_config(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path,
        "[tool.gradguard.per-file-ignores]\n"
        "'tests/' = ['GG001']\n'*.ipynb' = ['GG0']\n'/scripts/run.py' = ['GG003']\n",
    )
    assert not settings.rule_enabled("GG001", tmp_path / "tests" / "test_a.py")
    assert settings.rule_enabled("GG002", tmp_path / "tests" / "test_a.py")
    assert not settings.rule_enabled("GG002", tmp_path / "nb" / "explore.ipynb")
    assert not settings.rule_enabled("GG003", tmp_path / "scripts" / "run.py")
    assert settings.rule_enabled("GG003", tmp_path / "other" / "scripts" / "run.py")
    assert settings.rule_enabled("GG001", tmp_path / "train.py")


def test_nearest_config_walking_up_applies(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.gradguard]\nignore = ['GG001']\n", encoding="utf-8")
    sub = tmp_path / "pkg" / "deep"
    sub.mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text("[project]\nname='x'\n", encoding="utf-8")
    (tmp_path / "pkg" / "gradguard.toml").write_text("ignore = ['GG002']\n", encoding="utf-8")
    resolver = Resolver(tmp_path, known=KNOWN)
    assert resolver.for_path(sub / "a.py").config_path == tmp_path / "pkg" / "gradguard.toml"
    assert resolver.for_path(tmp_path / "b.py").config_path == tmp_path / "pyproject.toml"
    assert resolver.for_path(sub / "a.py").root == tmp_path / "pkg"


# End to end through the CLI (the rule catalogue supplies the known codes).


def _assert_config_error(project: Project, args: tuple[str, ...], *needles: str) -> None:
    result = project.lint(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in result.stderr


def test_unknown_key_exits_2_naming_file_and_key(project: Project) -> None:
    project.write("pyproject.toml", "[tool.gradguard]\nslect = ['GG']\n")
    project.write("train.py", GG001_SOURCE)
    _assert_config_error(project, (), str(project.root / "pyproject.toml"), "slect", "did you mean 'select'")


def test_wrong_type_exits_2(project: Project) -> None:
    project.write("pyproject.toml", "[tool.gradguard]\nextend-exclude = 'data'\n")
    _assert_config_error(project, (), "pyproject.toml", "extend-exclude", "expected a list of strings")


def test_invalid_toml_exits_2(project: Project) -> None:
    project.write("gradguard.toml", "[tool.gradguard\n")
    _assert_config_error(project, (), "gradguard.toml", "invalid TOML")


def test_unknown_rule_code_exits_2(project: Project) -> None:
    project.write("pyproject.toml", "[tool.gradguard]\nselect = ['GG999']\n")
    _assert_config_error(project, (), "pyproject.toml", "select", "'GG999'")


def test_unknown_code_on_the_command_line_exits_2(project: Project) -> None:
    _assert_config_error(project, ("--select", "GG001,XY12"), "--select", "'XY12'")


def test_a_per_file_pattern_that_matches_nothing_is_a_warning_not_an_error(project: Project) -> None:
    """A typo'd pattern must not block every pre-commit run: it is said on stderr, and linting goes on."""
    project.write("pyproject.toml", "[tool.gradguard.per-file-ignores]\n'tset/*.py' = ['GG001']\n")
    project.write("tests/test_a.py", GG001_SOURCE)
    result = project.lint()
    assert result.exit_code == 1, result.output
    assert "tests/test_a.py:" in result.stdout
    for needle in ("warning:", "pyproject.toml", "per-file-ignores", "'tset/*.py'", "matches no file"):
        assert needle in result.stderr
    assert "warning" not in project.lint("-q").stderr


def test_a_per_file_pattern_for_files_not_linted_now_is_accepted(project: Project) -> None:
    project.write("pyproject.toml", "[tool.gradguard.per-file-ignores]\n'tests/*.py' = ['GG001']\n")
    project.write("tests/test_a.py", GG001_SOURCE)
    project.write("train.py", "x = 1\n")
    result = project.lint("train.py")
    assert result.exit_code == 0, result.output


def test_a_per_file_pattern_for_an_excluded_file_that_exists_is_not_warned_about(project: Project) -> None:
    project.write(
        "pyproject.toml",
        "[tool.gradguard]\nexclude = ['legacy']\n[tool.gradguard.per-file-ignores]\n'legacy/*.py' = ['GG001']\n",
    )
    project.write("legacy/old.py", GG001_SOURCE)
    project.write("train.py", "x = 1\n")
    result = project.lint()
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr
    assert project.lint("legacy/old.py").exit_code == 0  # given explicitly, linted, and ignored by the pattern


def test_bad_config_file_option(project: Project) -> None:
    _assert_config_error(project, ("--config", "nowhere.toml"), "--config", "no such file")


def test_select_ignore_and_per_file_ignores_end_to_end(project: Project) -> None:
    project.write("train.py", GG001_SOURCE)
    project.write("tests/test_train.py", GG001_SOURCE)
    assert project.codes_by_file() == {
        "train.py": [("GG001", GG001_ROW)],
        "tests/test_train.py": [("GG001", GG001_ROW)],
    }
    project.write("pyproject.toml", "[tool.gradguard]\nignore = ['GG00']\n")
    assert project.codes_by_file() == {}
    assert project.codes_by_file("--select", "GG001") == {
        "train.py": [("GG001", GG001_ROW)],
        "tests/test_train.py": [("GG001", GG001_ROW)],
    }
    assert project.codes_by_file("--extend-select", "GG0") == {
        "train.py": [("GG001", GG001_ROW)],
        "tests/test_train.py": [("GG001", GG001_ROW)],
    }
    project.write(
        "pyproject.toml",
        "[tool.gradguard]\nselect = ['GG']\n[tool.gradguard.per-file-ignores]\n'tests/' = ['GG001']\n",
    )
    assert project.codes_by_file() == {"train.py": [("GG001", GG001_ROW)]}
    assert project.codes_by_file("--ignore", "GG") == {}


def test_output_format_from_config_and_cli_override(project: Project) -> None:
    project.write("train.py", GG001_SOURCE)
    project.write("pyproject.toml", "[tool.gradguard]\noutput-format = 'github'\n")
    result = project.lint()
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("::error")
    result = project.lint("--output-format", "concise")
    assert result.stdout.startswith("train.py:6:")


def test_config_option_replaces_discovery(project: Project) -> None:
    project.write("train.py", GG001_SOURCE)
    project.write("pyproject.toml", "[tool.gradguard]\nignore = ['GG001']\n")
    project.write("ci/strict.toml", "select = ['GG']\n")
    assert project.codes_by_file() == {}
    assert project.codes_by_file("--config", "ci/strict.toml") == {"train.py": [("GG001", GG001_ROW)]}


def test_patterns_apply_when_the_project_is_reached_through_a_symlink(project: Project) -> None:
    project.write(
        "pyproject.toml",
        "[tool.gradguard]\nextend-exclude = ['/generated/']\n"
        "[tool.gradguard.per-file-ignores]\n'tests/' = ['GG001']\n",
    )
    project.write("tests/test_train.py", GG001_SOURCE)
    project.write("generated/train.py", GG001_SOURCE)
    project.write("train.py", GG001_SOURCE)
    link = project.root.parent / "link"
    link.symlink_to(project.root)
    result = project.lint("link", cwd=project.root.parent)
    assert result.exit_code == 1, result.output
    assert [line.split(":")[0] for line in result.stdout.splitlines() if "GG001" in line] == ["link/train.py"]


# -- [tool.gradguard.api]: a project's own helpers ------------------------------------------------------


def test_api_table_declares_the_projects_helpers_as_typed_facts(tmp_path: Path) -> None:
    from gradguard.analysis.api import Backward, Fact, Returns, Role, lookup

    settings = _settings(
        tmp_path,
        "[tool.gradguard.api]\n"
        "detaches = ['utils.repackage_hidden']\n"
        "calls-backward = ['engine.Engine.step']\n"
        "fresh = ['noise.make_noise']\n"
        "keeps-state = ['metrics.Meter.update']\n",
    )
    assert settings.api == (
        Fact("utils.repackage_hidden", returns=Returns.CUT, cuts=Role.RESULT, source="config"),
        Fact("engine.Engine.step", backward=Backward.BACKWARD, root=Role.ARGUMENT, returns=Returns.NONE,
             source="config"),
        Fact("noise.make_noise", returns=Returns.FRESH, source="config"),
        Fact("metrics.Meter.update", stores=Role.ARGUMENTS, source="config"),
    )
    assert lookup("utils.repackage_hidden", project=settings.api) is settings.api[0]
    assert Settings(root=tmp_path).api == ()


def test_api_table_at_the_top_level_of_gradguard_toml(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "[api]\ndetaches = ['utils.repackage_hidden']\n", name="gradguard.toml")
    assert [fact.name for fact in settings.api] == ["utils.repackage_hidden"]


@pytest.mark.parametrize(
    ("body", "key", "expected"),
    [
        ("[tool.gradguard]\napi = ['x']\n", "[tool.gradguard.api]", "expected a table"),
        ("[tool.gradguard.api]\ndetach = ['a.b']\n", "unknown key 'detach'", "did you mean 'detaches'"),
        ("[tool.gradguard.api]\nfresh = 'a.b'\n", "[tool.gradguard.api] fresh", "expected a list of strings"),
        ("[tool.gradguard.api]\nkeeps-state = [1]\n", "keeps-state", "expected a list of strings"),
        ("[tool.gradguard.api]\ndetaches = ['utils/repackage']\n", "detaches", "is not a qualified name"),
        (
            "[tool.gradguard.api]\ndetaches = ['a.b']\nfresh = ['a.b']\n",
            "fresh",
            "'a.b' is also listed under detaches",
        ),
    ],
)
def test_a_bad_api_entry_is_named_with_what_was_expected(tmp_path: Path, body: str, key: str, expected: str) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_config(path, KNOWN)
    message = str(info.value)
    assert str(path) in message
    assert key in message
    assert expected in message


def test_a_bad_api_entry_exits_2(project: Project) -> None:
    project.write("pyproject.toml", "[tool.gradguard.api]\ncalls_backward = ['engine.step']\n")
    project.write("train.py", GG001_SOURCE)
    _assert_config_error(project, (), "pyproject.toml", "unknown key 'calls_backward'", "did you mean 'calls-backward'")
