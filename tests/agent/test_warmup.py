"""A pooled agent actor is ready before it is handed out: its first run imports nothing new."""

from __future__ import annotations

import pytest

from covey.agent.warmup import AGENT_RUN_MODULES, model_modules, warm_up
from covey.model.scripted import ScriptedModel
from covey.session import Session
from tests.session.scripts import MAIN, rule, scripted


def test_warm_up_loads_the_run_modules_and_names_what_is_missing():
    import sys

    assert warm_up(["covey.no_such_adapter"]) == ["covey.no_such_adapter"]
    assert all(name in sys.modules for name in AGENT_RUN_MODULES)


def test_the_session_model_decides_which_adapter_is_preloaded():
    assert model_modules(ScriptedModel.from_dict({"rules": []})) == ("covey.model.scripted",)
    assert model_modules("scripted:rules.yaml") == ()
    assert model_modules("sonnet") == model_modules(None) == ("covey.gateway.remote_model",)
    from covey.model.anthropic_config import AnthropicConfig

    assert model_modules(AnthropicConfig("k", None, "http://x")) == ("covey.gateway.remote_model",)


@pytest.mark.ray
@pytest.mark.usefixtures("ray_session")
async def test_a_pooled_actors_first_run_imports_no_module(tmp_path):
    todo = {"todos": [{"content": "look", "status": "in_progress", "activeForm": "looking"}]}
    model = scripted(
        rule({**MAIN, "last_tool_result_contains": "in progress"}, {"text": "done"}),
        rule(MAIN, {"tool_use": [{"name": "TodoWrite", "input": todo}, {"name": "Glob", "input": {"pattern": "*"}}]}),
    )
    session = Session(cwd=str(tmp_path), model=model, pool_size=1, transcript_dir=str(tmp_path / "t"))
    try:
        runtime = await session.start()
        actor = await runtime.registry.take("home")
        before = set(await actor.loaded_modules())
        results = [e async for e in actor.events(session.main_spec("go", runtime)) if type(e).__name__ == "ResultEvent"]
        after = set(await actor.loaded_modules())
        actor.kill()
    finally:
        session.close()
    assert [r.result for r in results] == ["done"]
    assert sorted(after - before) == []


HEAVY_FOR_AGENTS = ("mcp", "anthropic", "starlette", "uvicorn", "cryptography")
"""What an agent actor, a session host or a session without MCP servers never loads: the MCP SDK
(with its server side) and the Anthropic SDK (the node's model gateway holds it)."""


def test_an_agent_and_a_session_load_neither_the_mcp_nor_the_anthropic_sdk():
    import subprocess
    import sys

    code = ("import sys, covey.agent.warmup as w, covey.service.host, covey.session.core; w.warm_up(); "
            f"print([m for m in {HEAVY_FOR_AGENTS!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_service_preloads_the_gateway_only_with_a_key():
    from covey.service.hosting import service_preload

    assert service_preload({}) == ()
    assert service_preload({"ANTHROPIC_API_KEY": "k"}) == ("covey.gateway.remote_model",)
    assert service_preload({"ANTHROPIC_AUTH_TOKEN": "t"}) == ("covey.gateway.remote_model",)
