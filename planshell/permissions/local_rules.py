"""Your "always allow in this project" rules: a file of yours, per project, outside the repository.

The "a" answer of an approval used to add its rule to the repository's
``.planshell/config.toml``: a tracked file, so it showed in ``git status`` and
could be committed for everyone. It now goes to
``<data dir>/projects/<project key>/permissions.toml`` (the data dir is
``PLANSHELL_DATA_DIR`` or the platform's user data dir, the key the resolved
project root, as for sessions). Nothing inside the repository is read for these
rules, so a repository cannot ship one: only planshell writes the file, on the
person's own "a", and only the person's environment says where it is.
"""

from __future__ import annotations

from pathlib import Path

LOCAL_RULES_NAME = "permissions.toml"


def local_rules_path(root: Path) -> Path:
    """Where this project's "always" rules are kept (the user's data dir, never the repo)."""
    from planshell.agent.session import project_dir

    return project_dir(root) / LOCAL_RULES_NAME


def shown_path(path: Path) -> str:
    """``~/.local/share/planshell/…`` rather than the whole home path, for the prompt."""
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


def load_local_rules(path: Path) -> list[str]:
    """The rules in ``path`` (``[permissions] allow = [...]``); [] when there is none.

    Raises ``ConfigError`` (one sentence naming the file) for a broken file.
    """
    from planshell.config import ConfigError, read_config_file

    data = read_config_file(path).data
    section = data.get("permissions", {})
    allow = section.get("allow", []) if isinstance(section, dict) else None
    if not isinstance(allow, list) or not all(isinstance(r, str) for r in allow):
        raise ConfigError(f"config error in {path}: permissions.allow must be a list of strings.")
    return list(allow)


def save_local_rules(path: Path, rules: list[str]) -> str:
    """Add ``rules`` to ``path``'s ``permissions.allow`` (comments kept); the sentence to show."""
    from planshell.config import CONFIG_MAX_BYTES, toml_with_value
    from planshell.fsutil import atomic_write_text, read_user_file

    merged = list(dict.fromkeys([*load_local_rules(path), *rules]))  # a broken file: raises
    try:
        text = read_user_file(path, CONFIG_MAX_BYTES).decode("utf-8")
    except FileNotFoundError:
        text = ""
    if not text:
        text = (
            '# planshell: your "always allow in this project" rules for one project.\n'
            '# Written when you answer "a"; edit or delete freely. Not in the repository.\n'
        )
    new_text = toml_with_value(text, "permissions", "allow", merged, where=path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, new_text)
    return (
        f"Saved {', '.join(rules)} to {shown_path(path)} "
        "(your rules for this project, outside the repository)."
    )
