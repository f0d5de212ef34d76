"""The agent tree as a notebook display that updates in place while agents work (issue 6)."""

from __future__ import annotations

import asyncio

import pytest

from covey.observe.notebook import AgentTree, TreeDisplay, in_notebook
from covey.observe.notebook_timeline import TimelinePicture
from covey.session import Session
from tests.session.scripts import CHILD, MAIN, agent_call, rule, scripted


def _node(agent_id, status, children=(), **extra):
    return {"agent_id": agent_id, "type": extra.pop("type", "general-purpose"), "status": status, "turns": 1,
            "subtree_tokens": 1200, "subtree_cost_usd": 0.0012, "current_tools": extra.pop("tools", []),
            "node_id": "abcdef0123456789", "children": list(children), **extra}


class FakeDisplay:
    """IPython's ``display(obj, display_id=True)`` and the handle it returns."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.shown: list[AgentTree] = []

    def __call__(self, obj, **kw):
        self.calls.append(kw)
        self.shown.append(obj)
        return self

    def update(self, obj) -> None:
        self.shown.append(obj)


async def _until(check, timeout_s: float = 10.0) -> None:
    """Poll ``check`` until it holds; fail after ``timeout_s``."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "timed out waiting"
        await asyncio.sleep(0.005)


async def test_one_display_is_updated_in_place_until_the_final_state():
    snapshots = iter([
        _node("agent-main", "running", [_node("agent-c1", "running", tools=["Read"])]),
        _node("agent-main", "running", [_node("agent-c1", "completed")]),
    ])
    final = _node("agent-main", "completed", [_node("agent-c1", "completed")])

    async def get_tree():
        return next(snapshots, final)

    fake = FakeDisplay()
    async with TreeDisplay(get_tree, interval_s=0.01, display=fake) as view:
        await _until(lambda: view.updates >= 3)
    assert fake.calls == [{"display_id": True}]  # one display, then updates to it
    assert view.updates >= 3
    htmls = [tree._repr_html_() for tree in fake.shown]
    assert "no agents yet" in htmls[0]
    assert "Read" in htmls[1] and htmls[1].count(">running<") == 2
    assert htmls[-1].count(">completed<") == 2 and ">running<" not in htmls[-1]


async def test_a_failing_tree_query_never_stops_the_run():
    tries = []

    async def broken():
        tries.append(1)
        raise RuntimeError("registry gone")

    fake = FakeDisplay()
    async with TreeDisplay(broken, interval_s=0.01, display=fake) as view:
        await _until(lambda: len(tries) >= 3)  # it went on asking after the first failure
    assert view.updates == 0 and len(fake.shown) == 1


def test_the_table_nests_children_and_escapes_names():
    tree = _node("agent-main", "running", [_node("agent-c1", "failed", member_name="<b>ann</b>", type="worker")])
    html = AgentTree(tree)._repr_html_()
    assert html.count("<tr>") == 3  # header + two agents
    assert "&lt;b&gt;ann&lt;/b&gt;" in html and "<b>ann</b>" not in html
    assert "padding-left:1.5em" in html and "$0.0012" in html and "1,200" in html
    text = repr(AgentTree(tree))
    assert text.splitlines()[1].startswith("  └ worker <b>ann</b>  failed")


def test_outside_a_kernel_live_is_off_by_default():
    assert in_notebook() is False


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # borrows pooled actors
async def test_session_run_live_shows_children_running_then_done(tmp_path, monkeypatch):
    import IPython.display

    fake = FakeDisplay()
    monkeypatch.setattr(IPython.display, "display", fake)
    model = scripted(
        rule(CHILD, {"text": "child done"}, latency_s=1.5),
        rule({**MAIN, "last_message_contains": "<task-notification>"}, {"text": "all done"}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, {"tool_use": [agent_call(f"job {i}", background=True, description=f"job {i}") for i in range(2)]}),
    )
    (tmp_path / "p").mkdir()
    session = Session(cwd=str(tmp_path / "p"), model=model, pool_size=2, max_turns=8, transcript_dir=str(tmp_path / "t"))
    try:
        result = await asyncio.wait_for(session.run("go", live=True), 120)
    finally:
        session.close()
    assert result.result == "all done"
    assert fake.calls == [{"display_id": True}] * 2  # the tree and the timeline, each one display updated in place
    trees = [shown.tree for shown in fake.shown if isinstance(shown, AgentTree) and shown.tree]
    assert any(len(t["children"]) == 2 and all(c["status"] == "running" for c in t["children"]) for t in trees)
    assert trees[-1]["status"] == "completed" and [c["status"] for c in trees[-1]["children"]] == ["completed"] * 2
    pictures = [shown for shown in fake.shown if isinstance(shown, TimelinePicture)]
    assert any("running" in [row.status for row in p.timeline.rows] for p in pictures)  # drawn while they worked
    final = pictures[-1].timeline
    assert [(row.depth, row.status) for row in final.rows] == [(0, "completed"), (1, "completed"), (1, "completed")]
    assert pictures[-1].image.startswith(b"\x89PNG") and final.cost_usd == pytest.approx(result.total_cost_usd)
