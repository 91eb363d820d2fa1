"""Git configuration overrides that stop repository config from running programs.

``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` take precedence
over every config file, so a cloned repository's ``core.fsmonitor`` or
``diff.external`` cannot start a program during a "read-only" git command.
What this cannot cover: diff/filter drivers named per path in
``.gitattributes`` (``diff.<driver>.textconv``, ``filter.<driver>.*``) whose
driver names are not known in advance; the sandbox covers those.
"""

from __future__ import annotations

GIT_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("core.sshCommand", "false"),
    ("core.askPass", ""),
    ("pager.log", "false"),
    ("pager.diff", "false"),
    ("pager.show", "false"),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("uploadpack.packObjectsHook", ""),
    ("gpg.program", "false"),
    ("log.showSignature", "false"),
)


def git_safe_env() -> dict[str, str]:
    env = {"GIT_CONFIG_COUNT": str(len(GIT_OVERRIDES)), "GIT_PAGER": "cat", "PAGER": "cat"}
    for i, (key, value) in enumerate(GIT_OVERRIDES):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    env["GIT_OPTIONAL_LOCKS"] = "0"  # `git status` must not refresh the index
    return env
