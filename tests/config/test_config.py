"""Settings merge order and the one-sentence errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from planshell.config import (
    HARMLESS_PROJECT_KEYS,
    ConfigError,
    Settings,
    UISettings,
    is_security_relevant,
    load_settings,
    project_config_path,
    read_config_file,
    remember_user_setting,
    settings_keys,
)
from planshell.config.trust import trust
from tests.paths import DOCS, PACKAGE


def _trust_project(root: Path) -> None:
    trust(read_config_file(project_config_path(root)))


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults(tmp_path):
    settings = load_settings(tmp_path, environ={}, user_file=tmp_path / "none.toml")
    assert settings == Settings()
    assert settings.plan.sandbox == "auto"
    assert settings.plan.bash.safe_patterns is None


def test_merge_order(tmp_path):
    user = _write(
        tmp_path / "user.toml", 'model = "user"\nprovider = "openai"\n[plan]\nsandbox = "off"\n'
    )
    _write(
        tmp_path / ".planshell" / "config.toml", 'model = "project"\n[tools]\nbash_timeout = 5\n'
    )
    _trust_project(tmp_path)
    settings = load_settings(tmp_path, environ={}, user_file=user)
    assert (settings.model, settings.provider, settings.plan.sandbox) == (
        "project",
        "openai",
        "off",
    )
    assert settings.tools.bash_timeout == 5
    env = {"PLANSHELL_MODEL": "env", "PLANSHELL_TOOLS__BASH_TIMEOUT": "7"}
    settings = load_settings(tmp_path, environ=env, user_file=user)
    assert (settings.model, settings.tools.bash_timeout) == ("env", 7)
    settings = load_settings(
        tmp_path, environ=env, user_file=user, cli={"model": "flag", "base_url": None}
    )
    assert settings.model == "flag"


def test_env_lists_as_json(tmp_path):
    env = {"PLANSHELL_PLAN__BASH__SAFE_PATTERNS": '["^cargo tree\\\\b"]'}
    settings = load_settings(tmp_path, environ=env, user_file=tmp_path / "x")
    assert settings.plan.bash.safe_patterns == ["^cargo tree\\b"]


def test_broken_toml_names_the_file(tmp_path):
    user = _write(tmp_path / "user.toml", "model = \n")
    with pytest.raises(ConfigError) as err:
        load_settings(tmp_path, environ={}, user_file=user)
    assert str(user) in str(err.value) and "invalid TOML" in str(err.value)


def test_invalid_value_names_file_key_and_problem(tmp_path):
    project = _write(tmp_path / ".planshell" / "config.toml", '[plan]\nsandbox = "maybe"\n')
    # Untrusted, the bad key is ignored (the repository cannot stop planshell with it) ...
    assert load_settings(tmp_path, environ={}, user_file=tmp_path / "none").plan.sandbox == "auto"
    _trust_project(tmp_path)  # ... trusted, it is checked: the whole file is left out, said why.
    settings = load_settings(tmp_path, environ={}, user_file=tmp_path / "none")
    message = settings.project_config_error
    assert str(project) in message and "plan.sandbox" in message and "'maybe'" in message
    assert "ignores that file until it is fixed" in message
    assert settings.plan.sandbox == "auto"


def test_a_broken_project_file_is_left_out_whole_and_the_user_file_still_applies(tmp_path):
    user = _write(tmp_path / "user.toml", 'model = "mine"\n')
    project = _write(tmp_path / ".planshell" / "config.toml", "[ui]\ntheme = [not toml\n")
    settings = load_settings(tmp_path, environ={}, user_file=user)
    assert settings.model == "mine"
    assert str(project) in settings.project_config_error
    assert "invalid TOML" in settings.project_config_error


def test_a_broken_user_file_still_stops_start_up(tmp_path):
    _write(tmp_path / ".planshell" / "config.toml", 'model = "fine"\n')
    user = _write(tmp_path / "user.toml", "[plan]\nsandbox = 3\n")
    with pytest.raises(ConfigError, match=r"user\.toml"):
        load_settings(tmp_path, environ={}, user_file=user)


def test_a_second_problem_is_shown_not_counted(tmp_path):
    """Issue 26.22: "(and 1 more problems)" hid the only other problem; name it instead."""
    user = _write(tmp_path / "u.toml", "[plan]\nsandboxx = 1\n[tools]\nbash_timeout = -5\n")
    with pytest.raises(ConfigError) as err:
        load_settings(tmp_path, environ={}, user_file=user)
    message = str(err.value)
    assert "plan.sandboxx: unknown key" in message
    assert "tools.bash_timeout" in message
    assert "more problem" not in message
    more = _write(tmp_path / "m.toml", "a = 1\nb = 2\nc = 3\n")
    with pytest.raises(ConfigError, match=r"\(and 2 more problems\)"):
        load_settings(tmp_path, environ={}, user_file=more)


def test_unknown_key_is_an_error(tmp_path):
    user = _write(tmp_path / "u.toml", "[plan]\nsandboxx = 1\n")
    with pytest.raises(ConfigError, match=r"plan\.sandboxx: unknown key"):
        load_settings(tmp_path, environ={}, user_file=user)


def test_bad_env_value_blames_the_environment(tmp_path):
    with pytest.raises(ConfigError, match=r"environment: tools\.bash_timeout"):
        load_settings(
            tmp_path, environ={"PLANSHELL_TOOLS__BASH_TIMEOUT": "soon"}, user_file=tmp_path / "x"
        )


def test_remember_user_setting_keeps_comments(tmp_path):
    path = _write(
        tmp_path / "c.toml", '# my config\nmodel = "m"\n\n[ui]\n# theme below\ntheme = "old"\n'
    )
    remember_user_setting("ui", "theme", "planshell-light", path)
    text = path.read_text()
    assert "# my config" in text and "# theme below" in text
    assert 'theme = "planshell-light"' in text and "old" not in text
    assert load_settings(tmp_path, environ={}, user_file=path).ui.theme == "planshell-light"
    fresh = tmp_path / "new" / "config.toml"
    remember_user_setting("ui", "theme", "x", fresh)
    assert load_settings(tmp_path, environ={}, user_file=fresh).ui.theme == "x"
    other = _write(tmp_path / "o.toml", "[tools]\nbash_timeout = 3\n")
    remember_user_setting("ui", "theme", "y", other)
    loaded = load_settings(tmp_path, environ={}, user_file=other)
    assert (loaded.ui.theme, loaded.tools.bash_timeout) == ("y", 3)


def test_remember_user_setting_keeps_layout_spacing_and_other_sections(tmp_path):
    original = (
        "# planshell, edited by hand\n"
        'model   =   "m"   # my model\n'
        "\n"
        "[tools]\n"
        "  bash_timeout=3     # seconds\n"
        "\n"
        "[ui]\n"
        "# theme below\n"
        "theme='old'   # was old\n"
        "\n"
        "[plan]   # plan mode\n"
        'env_deny = [ "CORP_*",   "X" ]\n'
        "[plan.labels.plan]\n"
        'widget = "P"\n'
    )
    path = _write(tmp_path / "c.toml", original)
    remember_user_setting("ui", "theme", "planshell-light", path)
    # Exactly one line changed: the theme's value; its comment and every other byte stay.
    assert path.read_text() == original.replace("theme='old'", 'theme="planshell-light"')
    loaded = load_settings(tmp_path, environ={}, user_file=path)
    assert (loaded.ui.theme, loaded.tools.bash_timeout, loaded.plan.env_deny) == (
        "planshell-light",
        3,
        ["CORP_*", "X"],
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ('ui.theme = "old"\nmodel = "m"\n', 'ui.theme = "new"\nmodel = "m"\n'),  # dotted key
        ('ui = { theme = "old" }\n', 'ui = { theme = "new" }\n'),  # inline table
        ("[ui.extra]\n", '[ui]\ntheme = "new"\n\n[ui.extra]\n'),  # super-table appears once
    ],
)
def test_remember_user_setting_edits_where_the_key_is(tmp_path, before, after):
    path = _write(tmp_path / "c.toml", before)
    remember_user_setting("ui", "theme", "new", path)
    assert path.read_text() == after


@pytest.mark.parametrize("text", ["ui = \n", 'ui = "dark"\n'])
def test_remember_user_setting_leaves_a_broken_file_alone(tmp_path, text):
    path = _write(tmp_path / "c.toml", text)
    with pytest.raises(ConfigError, match="not changed"):
        remember_user_setting("ui", "theme", "new", path)
    assert path.read_text() == text


def test_settings_in_code_never_read_the_process_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANSHELL_MODEL", "from-env")
    monkeypatch.setenv("PLANSHELL_PLAN__SANDBOX", "off")
    assert Settings() == Settings.model_validate({})  # defaults, whatever the environment
    loaded = load_settings(tmp_path, user_file=tmp_path / "none")  # environ=None: os.environ
    assert (loaded.model, loaded.plan.sandbox) == ("from-env", "off")


def test_env_names_that_are_not_settings(tmp_path):
    ignored = {
        "PLANSHELL_DATA_DIR": "/x",
        "PLANSHELL_LOG_LEVEL": "DEBUG",
        "PLANSHELL_BASH_CORPUS": "1",
    }
    assert load_settings(tmp_path, environ=ignored, user_file=tmp_path / "x") == Settings()
    with pytest.raises(ConfigError, match=r"environment: PLANSHELL_MODLE: unknown setting"):
        load_settings(tmp_path, environ={"PLANSHELL_MODLE": "x"}, user_file=tmp_path / "x")
    with pytest.raises(ConfigError, match=r"environment: plan\.sandboxx: unknown key"):
        load_settings(
            tmp_path, environ={"PLANSHELL_PLAN__SANDBOXX": "off"}, user_file=tmp_path / "x"
        )


def test_env_tables_as_json_and_nested_names_merge(tmp_path):
    env = {"PLANSHELL_PLAN": '{"sandbox": "off"}', "PLANSHELL_PLAN__ENV_DENY": '["CORP_*"]'}
    plan = load_settings(tmp_path, environ=env, user_file=tmp_path / "x").plan
    assert (plan.sandbox, plan.env_deny) == ("off", ["CORP_*"])
    with pytest.raises(ConfigError, match=r"environment: plan: PLANSHELL_PLAN .*not valid JSON"):
        load_settings(tmp_path, environ={"PLANSHELL_PLAN": "{oops"}, user_file=tmp_path / "x")


@pytest.mark.parametrize(
    "text", ['plan__sandbox = "off"\n', 'PROVIDER = "openai"\n', '[PLAN]\nsandbox = "off"\n']
)
def test_file_keys_are_exact(tmp_path, text):
    """A file's keys are never split on ``__`` nor case-folded as environment names are."""
    user = _write(tmp_path / "u.toml", text)
    with pytest.raises(ConfigError, match="unknown key"):
        load_settings(tmp_path, environ={}, user_file=user)


def test_cli_reports_config_error_without_traceback(tmp_path, isolated_env):
    _write(tmp_path / ".planshell" / "config.toml", "[plan\n")
    proc = subprocess.run(
        [sys.executable, "-m", "planshell", "-C", str(tmp_path), "-p", "hi"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    # The repository's broken file is left out with a warning; planshell still answers.
    assert proc.returncode == 0, proc.stderr
    assert "warning: config error in" in proc.stderr and "Traceback" not in proc.stderr
    assert "Offline demo model" in proc.stdout


def test_one_label_field_keeps_the_other_defaults(tmp_path):
    user = _write(tmp_path / "u.toml", '[plan.labels.plan]\nwidget = "PLANNING"\n')
    labels = load_settings(tmp_path, environ={}, user_file=user).plan.labels
    assert labels.plan.widget == "PLANNING"
    assert labels.plan.widget_with_title == "PLAN · {title}"
    assert labels.execute.widget == "EXECUTE"


def test_every_setting_is_documented():
    from pydantic import BaseModel

    def keys(model: type[BaseModel], prefix: str = ""):
        for name, field in model.model_fields.items():
            default = field.get_default(call_default_factory=True)
            if isinstance(default, BaseModel):
                yield from keys(type(default), f"{prefix}{name}.")
            else:
                yield f"{prefix}{name}"

    doc = (DOCS / "configuration.md").read_text()

    def documented(key: str) -> str:
        # The three label groups share one table row: plan.labels.*.<field>.
        parts = key.split(".")
        if parts[:2] == ["plan", "labels"]:
            parts[2] = "*"
        return f"`{'.'.join(parts)}`"

    missing = [k for k in keys(Settings) if documented(k) not in doc]
    assert missing == []


# --- which project keys need trust ------------------------------------------------


def test_every_settings_key_is_classified_and_only_theme_and_start_mode_are_harmless():
    keys = settings_keys()
    assert ("plan", "sandbox") in keys and ("plan", "bash", "safe_patterns") in keys
    assert ("plan", "labels", "off", "widget") in keys and ("headers",) in keys
    harmless = {k for k in keys if not is_security_relevant(k)}
    # Widening this set is a security decision: update docs/configuration.md and
    # docs/security.md ("Project trust") together with this line.
    assert harmless == {("ui", "theme"), ("ui", "start_mode")}
    assert set(keys) >= HARMLESS_PROJECT_KEYS, "an allowlisted key no longer exists"


def test_a_key_added_later_is_security_relevant_by_default():
    class NewUI(UISettings):
        font: str = "mono"

    class NewSettings(Settings):
        ui: NewUI = NewUI()
        telemetry_url: str | None = None

    new = set(settings_keys(NewSettings)) - set(settings_keys())
    assert new == {("ui", "font"), ("telemetry_url",)}
    assert all(is_security_relevant(k) for k in new)


@pytest.mark.parametrize(
    "text",
    [
        '[plan.labels.plan]\nwidget = "PLAN\\u001b]52;c;ZXZpbA==\\u0007"\n',
        '[plan.labels.off]\nnotify = "two\\nlines"\n',
        '[plan.labels.off]\nwidget = "\\u202eNALP"\n',
        '[ui]\ntheme = "[@click=app.quit]x[/]"\n',
        '[ui]\ntheme = "dark\\u001b[2J"\n',
    ],
)
def test_text_shown_on_screen_must_be_printable(tmp_path, text):
    user = _write(tmp_path / "u.toml", text)
    with pytest.raises(ConfigError, match=r"printable|name of letters"):
        load_settings(tmp_path, environ={}, user_file=user)


def test_config_file_must_be_regular_utf8_text(tmp_path):
    project = tmp_path / ".planshell" / "config.toml"
    project.parent.mkdir()
    project.write_bytes(b'model = "caf\xe9"\n')
    assert "not UTF-8" in _ignored(tmp_path)
    project.unlink()
    project.symlink_to("/dev/zero")  # would never end with a plain read
    assert "symlink to /dev/zero" in _ignored(tmp_path)
    project.unlink()
    os.mkfifo(project)  # would block a plain open
    assert "not a regular file" in _ignored(tmp_path)


def _ignored(root):
    """Why the project file was left out (it must have been)."""
    error = load_settings(root, environ={}, user_file=root / "none").project_config_error
    assert error
    return error


def test_project_config_symlinked_to_the_environment_is_not_parsed(tmp_path, monkeypatch):
    """A repository's config.toml -> /proc/self/environ: refused by name, its bytes never shown."""
    monkeypatch.setenv("FAKE_SECRET", "sk-config-leak")
    project = tmp_path / ".planshell" / "config.toml"
    project.parent.mkdir()
    project.symlink_to("/proc/self/environ")
    error = _ignored(tmp_path)
    assert "symlink to /proc/self/environ" in error
    assert "sk-config-leak" not in error


def test_project_config_behind_a_symlinked_folder_outside_is_refused(tmp_path):
    """``.planshell`` itself a link to another folder: its config is not the project's."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere).mkdir()
    (elsewhere / "config.toml").write_text('model = "from-outside"\n')
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".planshell").symlink_to(elsewhere)
    assert "symlinked folder" in _ignored(root)
    assert load_settings(root, environ={}, user_file=tmp_path / "none").model is None


# --- provider names: one registry --------------------------------------------------


def test_provider_setting_is_checked_at_load_naming_the_file(tmp_path):
    from planshell.llm.factory import PROVIDER_CHOICES

    for name in PROVIDER_CHOICES:
        assert Settings(provider=name).provider == name
    user = _write(tmp_path / "u.toml", 'provider = "ollama"\n')
    with pytest.raises(ConfigError) as err:
        load_settings(tmp_path, environ={}, user_file=user)
    message = str(err.value)
    assert str(user) in message and "provider" in message and "'ollama'" in message
    assert f"provider: must be one of {', '.join(PROVIDER_CHOICES)} (got 'ollama')." in message


def test_factory_refuses_a_name_that_skipped_validation():
    from planshell.llm.factory import make_provider

    unchecked = Settings().model_copy(update={"provider": "ollama"})  # as /provider builds it
    with pytest.raises(ConfigError, match=r"unknown provider 'ollama': choose one of auto, demo"):
        make_provider(unchecked, environ={})


def test_every_provider_list_is_the_registry():
    import argparse

    from planshell import provider_names
    from planshell.cli import _main_parser
    from planshell.llm.factory import DEFAULT_MODELS, KEY_VARS, PROVIDER_CHOICES, PROVIDERS
    from planshell.ui.commands_model import _provider_names

    assert PROVIDER_CHOICES == ("auto", *PROVIDERS) == provider_names.PROVIDER_CHOICES
    flag = next(a for a in _main_parser()._actions if "--provider" in a.option_strings)
    assert isinstance(flag, argparse.Action) and tuple(flag.choices or ()) == PROVIDER_CHOICES
    assert tuple(_provider_names(None, "")) == PROVIDER_CHOICES  # type: ignore[arg-type]
    with pytest.raises(Exception, match="must be one of auto, demo, openai, anthropic"):
        Settings(provider="nope")
    assert set(KEY_VARS) | set(DEFAULT_MODELS) <= set(PROVIDERS)


def test_no_module_hard_codes_provider_names():
    """Any list, tuple, set, Literal or dict naming two providers outside the registry fails."""
    import ast

    from planshell.llm.factory import PROVIDER_CHOICES

    package = PACKAGE
    allowed = {package / "provider_names.py", package / "llm" / "factory.py"}
    found = []
    for path in sorted(package.rglob("*.py")):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.List | ast.Tuple | ast.Set):
                items = node.elts
            elif isinstance(node, ast.Dict):
                items = [k for k in node.keys if k is not None]
            else:
                continue
            names = {i.value for i in items if isinstance(i, ast.Constant)} & set(PROVIDER_CHOICES)
            if len(names) >= 2:
                found.append(f"{path.relative_to(package)}:{node.lineno}")
    assert found == []


def test_env_names_are_case_insensitive_and_values_convert(tmp_path):
    env = {"planshell_model": "m", "Planshell_Tools__Bash_Timeout": "9"}
    settings = load_settings(tmp_path, environ=env, user_file=tmp_path / "x")
    assert (settings.model, settings.tools.bash_timeout) == ("m", 9)


def test_env_nested_json_errors_name_the_variable(tmp_path):
    env = {"PLANSHELL_PLAN__ENV_DENY": "[oops"}
    with pytest.raises(ConfigError, match=r"environment: plan\.env_deny: PLANSHELL_PLAN__ENV_DENY"):
        load_settings(tmp_path, environ=env, user_file=tmp_path / "x")


def test_env_reaches_a_table_of_tables(tmp_path):
    """``headers`` and ``agents`` are tables keyed by any name: a nested name reaches them."""
    env = {
        "PLANSHELL_HEADERS": '{"X-One": "1"}',
        "PLANSHELL_AGENTS__SCOUT": '{"description": "looks around", "tools": ["read_file"]}',
    }
    settings = load_settings(tmp_path, environ=env, user_file=tmp_path / "x")
    assert settings.headers == {"X-One": "1"}
    assert settings.agents["scout"].description == "looks around"


def test_env_layer_merges_over_the_user_file_key_by_key(tmp_path):
    user = _write(tmp_path / "u.toml", '[plan]\nsandbox = "off"\nenv_deny = ["A_*"]\n')
    env = {"PLANSHELL_PLAN__ENV_DENY": '["B_*"]'}
    plan = load_settings(tmp_path, environ=env, user_file=user).plan
    assert (plan.sandbox, plan.env_deny) == ("off", ["B_*"])


@pytest.mark.parametrize("name", ["PLANSHELL_PLAN__", "PLANSHELL_PLAN____SANDBOX"])
def test_env_names_with_an_empty_part_are_errors(tmp_path, name):
    with pytest.raises(ConfigError, match=rf"environment: {name}: unknown setting"):
        load_settings(tmp_path, environ={name: "off"}, user_file=tmp_path / "x")
