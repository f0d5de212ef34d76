"""A served run's messages to its client (``covey.service.runs``), with a stand-in session."""

from __future__ import annotations

from covey.client import ports as protocol
from covey.service.runs import ServedRun


class _Event:
    def wire(self) -> dict:
        return {"type": "assistant"}


class _Session:
    """A run that ends at once; its tree is the final one by then."""

    async def stream(self, prompt: str):
        yield _Event()

    async def tree(self) -> dict:
        return {"agent_id": "agent-1", "status": "completed"}


async def test_the_live_tree_ends_with_the_final_tree_for_the_clients_last_frame():
    request = protocol.control_request(protocol.RUN, cwd="/p", env={}, options={}, run={"live": True})
    run = ServedRun(request, None, None)  # type: ignore[arg-type]
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    run.send = send  # type: ignore[method-assign]
    await run._stream(_Session(), "go")  # type: ignore[arg-type]
    assert sent == [{"type": "assistant"}, {"type": protocol.LIVE, "tree": {"agent_id": "agent-1", "status": "completed"}}]
