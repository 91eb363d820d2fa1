"""ToolRegistry behaviour, and the contract every built-in tool must meet."""

from __future__ import annotations

from typing import Any

import pytest

from planshell.tools.base import Effect, Tool, ToolArgs, ToolContext, ToolResult
from planshell.tools.builtin import builtin_tools
from planshell.tools.registry import ToolRegistry
from planshell.tools.todo import TodoList
from tests.fresh_python import fresh_python


class Dummy(Tool[ToolArgs]):
    name = "dummy"
    description = "A test tool."
    Args = ToolArgs
    effects = frozenset({Effect.READ})

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult("ok")


@pytest.fixture
def tools() -> list[Tool[Any]]:
    return builtin_tools(TodoList())


def test_register_and_refuse_duplicates(tools: list[Tool[Any]]) -> None:
    registry = ToolRegistry(tools)
    assert registry.names() == [t.name for t in tools]
    assert registry.get("read") is tools[0]
    assert registry.get("nope") is None
    with pytest.raises(ValueError, match="'read' is already registered"):
        registry.register(tools[0])
    registry.register(Dummy(), active=False)
    assert "dummy" in registry.names()
    assert not registry.is_active("dummy")


def test_active_set_swap_returns_previous(tools: list[Tool[Any]]) -> None:
    registry = ToolRegistry(tools)
    everything = registry.active
    previous = registry.set_active(["read", "grep", "read"])
    assert previous == everything
    assert registry.active == ("read", "grep")
    assert [s.name for s in registry.specs()] == ["read", "grep"]
    assert registry.set_active(previous) == ("read", "grep")
    assert registry.active == everything


def test_unknown_names_are_refused(tools: list[Tool[Any]]) -> None:
    registry = ToolRegistry(tools)
    with pytest.raises(KeyError, match="unknown tools: nope"):
        registry.set_active(["read", "nope"])
    assert registry.active == tuple(t.name for t in tools)


def _properties(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any], bool]]:
    """Every object property in a JSON schema (name, schema, required), definitions included."""
    required = set(schema.get("required", []))
    found = [(name, prop, name in required) for name, prop in schema.get("properties", {}).items()]
    for definition in schema.get("$defs", {}).values():
        found += _properties(definition)
    return found


def test_specs_carry_schemas_with_descriptions(tools: list[Tool[Any]]) -> None:
    specs = ToolRegistry(tools).specs()
    assert [s.name for s in specs] == [
        "read",
        "ls",
        "find",
        "grep",
        "edit",
        "write",
        "bash",
        "todo_write",
    ]
    for spec in specs:
        assert spec.parameters["type"] == "object"
        assert "title" not in spec.parameters
        assert spec.parameters.get("additionalProperties") is False
        properties = _properties(spec.parameters)
        assert properties, spec.name
        for field, prop, required in properties:
            # Every schema word is sent with every request (issue 14): optional switches
            # whose name says it all (include_hidden, ignore_case) may go without one.
            if required:
                assert prop.get("description"), f"{spec.name}.{field} has no description"


def test_builtin_tools_declare_effects_and_descriptions(tools: list[Tool[Any]]) -> None:
    assert len({t.name for t in tools}) == len(tools)
    for tool in tools:
        assert tool.effects, tool.name
        assert tool.effects <= set(Effect)
        assert len(tool.description) > 80, tool.name
        assert issubclass(tool.Args, ToolArgs)


def test_read_only_follows_effects(tools: list[Tool[Any]]) -> None:
    read_only = {t.name for t in tools if t.read_only}
    assert read_only == {"read", "ls", "find", "grep", "todo_write"}
    bash = next(t for t in tools if t.name == "bash")
    assert bash.effects == {Effect.EXEC, Effect.WRITE, Effect.NETWORK}


def test_tools_never_import_textual() -> None:
    """The engine is headless: importing every built-in tool must not pull in Textual."""
    code = "import sys, planshell.tools.builtin; print('textual' in sys.modules)"
    assert fresh_python(code).strip() == "False"


def test_a_spec_is_the_schema_pydantic_gives_and_callers_cannot_change_it(
    tools: list[Tool[Any]],
) -> None:
    from planshell.tools.base import lean_schema

    for tool in tools:
        assert tool.spec().parameters == lean_schema(tool.Args.model_json_schema())
    read = next(t for t in tools if t.name == "read")
    first = read.spec().parameters
    first["properties"].clear()  # a provider that edits what it was given
    first["injected"] = True
    again = read.spec().parameters
    assert again == lean_schema(read.Args.model_json_schema())
    assert "injected" not in again and again["properties"]
