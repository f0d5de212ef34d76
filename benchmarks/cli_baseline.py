"""The ``cli`` case's baseline: ``python -m benchmarks.cli_baseline API_URL N TMP`` runs N
in-process ``AgentRunner``s on the child specs covey builds (the prompts ``CHILD-<i>`` the
fake API serves), concurrently, and prints ``{"s": seconds}``: no Ray, no registry, no
mailbox, no service."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path


async def baseline(api_url: str, n: int, tmp: Path) -> float:
    from benchmarks.fanout import run_children_in_process
    from covey.gateway.anthropic import AnthropicModel
    from covey.session import Session

    project = tmp / "baseline"
    project.mkdir(exist_ok=True)
    session = Session(cwd=str(project), model=AnthropicModel(api_key="x", base_url=api_url, max_retries=1),
                      transcript_dir=str(tmp / "baseline-transcripts"))
    inputs = [{"description": f"child {i}", "prompt": f"CHILD-{i}: do your part", "subagent_type": "general-purpose"}
              for i in range(n)]
    return await run_children_in_process(session, inputs, background=False)


if __name__ == "__main__":
    url, count, folder = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    print(json.dumps({"s": round(asyncio.run(baseline(url, count, folder)), 3)}))
