"""A tool's call to the registry is typed all the way down: through ``ToolServices.runtime`` (the
narrow ``ToolRuntime``), which the session runtime's ``RegistryPort`` meets, which ``RegistryHandle``
meets. A wrong call, or a call a plain tool has no business making, fails the type check."""

from __future__ import annotations

from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[2]

WRONG = '''
from covey.tools.base import ToolContext


async def stop(ctx: ToolContext) -> bool:
    runtime = ctx.services.runtime
    return runtime is not None and await runtime.registry.kill_agent("agent-1", 3)


async def launch(ctx: ToolContext) -> object:
    runtime = ctx.services.runtime
    return runtime is not None and await runtime.registry.resume("agent-1")
'''

RIGHT = '''
from covey.tools.base import ToolContext


async def stop(ctx: ToolContext) -> bool:
    runtime = ctx.services.runtime
    return runtime is not None and await runtime.registry.kill_agent("agent-1", "stopped by TaskStop")
'''


def _errors(tmp_path: Path) -> dict[str, list[str]]:
    snippets = {}
    for name, text in (("wrong", WRONG), ("right", RIGHT)):
        snippets[name] = tmp_path / f"{name}_tool_services.py"
        snippets[name].write_text(text)
    out, err, _ = api.run([*map(str, snippets.values()), "--config-file", str(ROOT / "pyproject.toml"),
                           "--cache-dir", str(ROOT / ".mypy_cache"), "--no-error-summary"])
    assert "error: " not in err, err
    return {name: [line for line in out.splitlines() if f"/{path.name}:" in line and ": error:" in line]
            for name, path in snippets.items()}


def test_a_tools_registry_call_is_type_checked_and_reaches_only_what_the_port_offers(tmp_path):
    errors = _errors(tmp_path)
    assert errors["right"] == []
    wrong = errors["wrong"]
    assert any(':7: error: Argument 2 to "kill_agent" of "AgentStops"' in line for line in wrong), wrong
    assert any(':12: error: "AgentStops" has no attribute "resume"' in line for line in wrong), wrong
