"""A background agent's notice: put by the agent itself, one per key, forwarded when its owner is gone.

Plain fakes, no Ray: the in-memory Mailbox the mailbox actor wraps, the inbox
with a fake registry, and an AgentRunner whose runtime holds them.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from covey.agent.inbox import RuntimeInbox
from covey.agent.notice import deliver_own_notice
from covey.agent.runner import AgentRunner
from covey.definitions.definition import AgentDefinition
from covey.model.scripted import ScriptedModel
from covey.runtime.records import FinalReport
from covey.runtime.spec import AgentSpec
from covey.teams.mailbox import Mailbox
from covey.teams.messages import TaskNotice, TeammateMessage
from covey.teams.render import render_notice
from covey.tools.options import ToolOptions


def _notice(agent_id: str, key: str | None = None, status: str = "completed") -> TaskNotice:
    return TaskNotice(task_id=agent_id, status=status, summary=f"{agent_id} {status}", key=key or f"{agent_id}#0")


async def test_the_mailbox_queues_one_notice_per_key_whoever_sends_it():
    mailbox = Mailbox()
    assert await mailbox.put("main", _notice("bg"))  # the agent's own
    assert await mailbox.put("main", _notice("bg", status="failed")) == ""  # the registry's, after a death
    assert await mailbox.put("main", _notice("bg", key="bg#1"))  # a resumed run notifies again
    assert [(m.status, m.key) for m in await mailbox.drain("main")] == [("completed", "bg#0"), ("completed", "bg#1")]


async def test_notices_to_an_ended_owner_go_on_to_the_main_agent_and_other_mail_stays():
    mailbox = Mailbox()
    await mailbox.put("mid", _notice("early"))
    await mailbox.put("mid", TeammateMessage(sender="lead", text="hello"))
    await mailbox.close("mid", "main")
    await mailbox.put("mid", _notice("late"))
    assert [m.task_id for m in await mailbox.drain("main")] == ["early", "late"]
    assert [m.text for m in await mailbox.drain("mid")] == ["hello"]  # a resumed agent still reads it
    await mailbox.reopen("mid")
    await mailbox.put("mid", _notice("again"))
    assert [m.task_id for m in await mailbox.drain("mid")] == ["again"]


class _Registry:
    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        self.tells: list[tuple[str, tuple[Any, ...]]] = []

    async def outstanding(self, agent_id: str) -> list[str]:
        return list(self.keys)

    def tell_parked(self, agent_id: str, parked: bool, seq: int) -> None:
        self.tells.append(("set_parked", (agent_id, parked, seq)))


def _runtime(registry: _Registry, mailbox: Mailbox) -> SimpleNamespace:
    return SimpleNamespace(registry=registry, mailbox=mailbox, teams=False, messaging=False, coordinator=False, session_id="s", tools=ToolOptions(), tool_names=[], skills={},
                           project_context={}, limits=None, definitions={}, root=None, transcript_dir=None)


async def test_an_owner_that_read_a_childs_notice_stops_waiting_though_the_registry_still_lists_it():
    mailbox = Mailbox()
    registry = _Registry(["bg#0"])  # the child's report has not reached the registry yet
    inbox = RuntimeInbox(_runtime(registry, mailbox), "main")
    inbox.note_launch()
    assert await inbox.outstanding()
    await mailbox.put("main", _notice("bg"))
    assert len(await inbox.wait()) == 1
    assert not await inbox.outstanding()


class _CountingMailbox(Mailbox):
    def __init__(self) -> None:
        super().__init__()
        self.puts: list[tuple[str, Any]] = []

    async def put(self, recipient: str, mail: Any) -> str:
        self.puts.append((recipient, mail))
        return await super().put(recipient, mail)


def _child_spec(tmp_path, runtime: Any, **fields: Any) -> AgentSpec:
    model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": {"text": "the answer is 42"}}]})
    values = dict(session_id="s", agent_id="agent-bg", definition=AgentDefinition(name="general-purpose"),
                  prompt="compute", model=model, model_id="m", cwd=str(tmp_path), tool_names=[], depth=1,
                  parent_agent_id="agent-parent", tool_use_id="toolu_1", description="compute it",
                  background=True, transcript_dir=str(tmp_path), runtime=runtime)
    return AgentSpec(**{**values, **fields})


async def test_a_background_child_puts_its_own_notice_for_its_owner(tmp_path):
    mailbox = _CountingMailbox()
    runtime = _runtime(_Registry([]), mailbox)
    runtime.project_context = {str(tmp_path): []}
    runner = AgentRunner()
    await runner.start(_child_spec(tmp_path, runtime))
    report = await runner.wait()
    assert report.status == "completed" and report.delivered_at is not None
    [(recipient, notice)] = mailbox.puts
    assert recipient == "agent-parent" and notice.key == "agent-bg#0"
    assert (notice.task_id, notice.result, notice.tool_use_id) == ("agent-bg", "the answer is 42", "toolu_1")
    text = render_notice(notice)
    assert "<task-id>agent-bg</task-id>" in text and "the answer is 42" in text
    assert "<tool-use-id>toolu_1</tool-use-id>" in text and 'Agent "compute it" finished' in text


async def test_sync_resumed_and_team_agents_leave_their_notice_to_the_registry(tmp_path):
    for fields in ({"background": False},
                   {"history": [{"role": "user", "content": "compute"}]},
                   {"team": {"name": "t", "member": "m", "roster": None, "board": None}}):
        mailbox = _CountingMailbox()
        runtime = _runtime(_Registry([]), mailbox)
        runtime.project_context = {str(tmp_path): []}
        runner = AgentRunner()
        spec = _child_spec(tmp_path, runtime, **fields)
        if "team" in fields:  # a teammate's inbox claims board tasks: keep to the delivery rule itself
            report = await deliver_own_notice(spec, FinalReport(status="completed", text="done"), str(tmp_path / "t.jsonl"))
        else:
            await runner.start(spec)
            report = await runner.wait()
        assert report.delivered_at is None, fields
        assert not [mail for _, mail in mailbox.puts if isinstance(mail, TaskNotice)], fields


async def test_an_agent_that_mail_may_still_resume_leaves_its_notice_to_the_registry(tmp_path):
    """With teams (SendMessage) or after launching background work, mail can come during the
    last turn: the registry then resumes the agent right after its notice, and the owner
    must not read the notice before the registry knows (it would stop waiting too early)."""
    mailbox = _CountingMailbox()
    runtime = _runtime(_Registry([]), mailbox)
    report = await deliver_own_notice(_child_spec(tmp_path, runtime), FinalReport(status="completed", text="done"),
                                      str(tmp_path / "t.jsonl"), launched_background=True)
    assert report.delivered_at is None and not mailbox.puts
    runtime.project_context = {str(tmp_path): []}
    for switch in ("teams", "coordinator"):  # either lets SendMessage reach a finished agent
        setattr(runtime, switch, True)
        runtime.messaging = True
        runner = AgentRunner()
        await runner.start(_child_spec(tmp_path, runtime))
        assert (await runner.wait()).delivered_at is None, switch
        assert not [mail for _, mail in mailbox.puts if isinstance(mail, TaskNotice)], switch
        setattr(runtime, switch, False)


async def test_a_failed_child_is_not_resumed_by_mail_so_it_puts_its_own_notice(tmp_path):
    """Mail resumes only a completed agent: a failed one's notice need not wait for the registry."""
    mailbox = _CountingMailbox()
    runtime = _runtime(_Registry([]), mailbox)
    runtime.messaging = True
    report = await deliver_own_notice(_child_spec(tmp_path, runtime), FinalReport(status="failed", text="boom"),
                                      str(tmp_path / "t.jsonl"), launched_background=True)
    [(recipient, notice)] = mailbox.puts
    assert report.delivered_at is not None and recipient == "agent-parent"
    assert (notice.status, notice.result, notice.output_file) == ("failed", "boom", str(tmp_path / "t.jsonl"))
