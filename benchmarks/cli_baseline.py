"""The ``cli`` case's baseline: ``python -m benchmarks.cli_baseline API_URL N TMP`` runs N
in-process ``AgentRunner``s on the child specs covey builds (the prompts ``CHILD-<i>`` the
fake API serves), concurrently, and prints ``{"s": seconds}``: no Ray, no registry, no
mailbox, no service."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any


async def baseline(api_url: str, n: int, tmp: Path) -> float:
    from covey.actors.agent import AgentRunner
    from covey.agents.children import child_spec
    from covey.model.anthropic import AnthropicModel
    from covey.runtime import SessionRuntime
    from covey.session import Session
    from covey.tools.agent_schema import agent_input_model
    from covey.tools.catalog import tool_names

    project = tmp / "baseline"
    project.mkdir(exist_ok=True)
    session = Session(cwd=str(project), model=AnthropicModel(api_key="x", base_url=api_url, max_retries=1),
                      transcript_dir=str(tmp / "baseline-transcripts"))
    runtime = SessionRuntime(session_id=session.session_id, registry=None, mailbox=None,
                             definitions=session.definitions, limits=session.limits,
                             transcript_dir=session.options.transcript_dir)
    parent = session.main_spec("go", runtime)
    call_model = agent_input_model(background=False)
    specs = []
    for i in range(n):
        call = call_model(description=f"child {i}", prompt=f"CHILD-{i}: do your part", subagent_type="general-purpose")
        spec = await child_spec(parent, session.definitions["general-purpose"], call, agent_id=f"agent-b{i}",
                                tool_use_id=f"toolu_{i}", background=False, available_tools=tool_names())
        specs.append(spec.model_copy(update={"runtime": None}))

    async def one(spec: Any) -> None:
        async for _ in AgentRunner().run(spec):
            pass

    started = time.monotonic()
    await asyncio.gather(*(one(s) for s in specs))
    return time.monotonic() - started


if __name__ == "__main__":
    url, count, folder = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    print(json.dumps({"s": round(asyncio.run(baseline(url, count, folder)), 3)}))
