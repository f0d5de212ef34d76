"""The type checker holds every registry call to the supervisor's own signature: a wrong
call, to the handle or through the typed remote-call helper, is an error; the right ones pass.
(mypy with the project's configuration and its incremental cache: fast once the cache is warm.)"""

from __future__ import annotations

from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[2]

WRONG = '''
from covey.registry.handle import RegistryHandle


async def stop(registry: RegistryHandle) -> bool:
    return await registry.kill_agent("agent-1", "killed", "stopped by the user")


async def stop_raw(registry: RegistryHandle) -> bool:
    return await registry._call(registry.remote.kill_agent, "agent-1", 3)
'''

RIGHT = '''
from covey.registry.handle import RegistryHandle


async def stop(registry: RegistryHandle) -> bool:
    return await registry.kill_agent("agent-1", "stopped by the user")


async def stop_raw(registry: RegistryHandle) -> bool:
    return await registry._call(registry.remote.kill_agent, "agent-1", "killed", "stopped by the user")
'''


def _errors(tmp_path: Path) -> dict[str, list[str]]:
    """mypy's errors in each snippet, by its name (other modules' are not this test's)."""
    snippets = {}
    for name, text in (("wrong", WRONG), ("right", RIGHT)):
        snippets[name] = tmp_path / f"{name}_registry_calls.py"
        snippets[name].write_text(text)
    out, err, _ = api.run([*map(str, snippets.values()), "--config-file", str(ROOT / "pyproject.toml"),
                           "--cache-dir", str(ROOT / ".mypy_cache"), "--no-error-summary"])
    assert "error: " not in err, err
    # By file name: a snippet mypy's cache already knows is reported under the path it had then.
    return {name: [line for line in out.splitlines() if f"/{path.name}:" in line and ": error:" in line]
            for name, path in snippets.items()}


def test_a_wrong_registry_call_fails_the_type_check_and_the_right_one_passes(tmp_path):
    errors = _errors(tmp_path)
    assert errors["right"] == []
    wrong = errors["wrong"]
    assert any(':6: error: Too many arguments for "kill_agent" of "RegistryHandle"' in line for line in wrong), wrong
    # Through the helper: the third argument is kill_agent's ``status``, a Status literal.
    assert any(':10: error: Argument 3 to "_call" of "RegistryHandle"' in line and "'killed'" in line
               for line in wrong), wrong
