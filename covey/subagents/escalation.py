"""No escalation through the Agent tool: a child more powerful than its parent needs a person.

An Agent call is untrusted input. The child it starts may not run unasked what its parent could
not: a mode that allows more without asking (``acceptEdits``, ``bypassPermissions``: from the
call's ``mode`` or the definition's ``permissionMode``), or a ``cwd`` outside the parent's
working directories (it would become the child's working directory). Either is put to a person
as an approval that names it; with nobody to ask it is denied. This is plain Python: the Agent
tool asks through its context (``ToolServices.confirm``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from covey.permissions.decisions import Ask
from covey.permissions.modes import more_permissive
from covey.permissions.paths import inside, resolve


def launch_escalation(parent: Any, definition: Any, call: Any, agent_type: str) -> Ask | None:
    """The approval this launch needs, or None when the child is no more powerful than its parent."""
    policy = getattr(parent, "permissions", None)
    if policy is None or policy.mode == "bypassPermissions":
        return None  # nothing is more permissive than an agent that is asked nothing
    reasons = []
    asked_mode = getattr(call, "mode", None) or getattr(definition, "permission_mode", None)
    child_mode = policy.child_mode(asked_mode)
    if more_permissive(child_mode, policy.mode):
        source = "the call's mode" if getattr(call, "mode", None) else f"the {agent_type!r} definition's permissionMode"
        reasons.append(f"run in {child_mode} mode ({source}), more permissive than this agent's {policy.mode} mode")
    cwd = getattr(call, "cwd", None)
    if cwd:
        where = resolve(cwd, Path(policy.where.cwd), policy.where.home)
        if not inside(where, policy.working_directories()):
            reasons.append(f"work in {str(where)!r}, outside this agent's working directories")
    if not reasons:
        return None
    subject = agent_type
    question = f"Allow a {agent_type!r} sub-agent to " + " and to ".join(reasons) + "?"
    return Ask(tool_name="Agent", subject=subject, input=_wire(call), message=question, source=f"mode:{policy.mode}",
               reason="; ".join(reasons))


def refused_text(ask: Ask, message: str) -> str:
    """What the model reads when the escalation was not approved."""
    return (f"The sub-agent was not started: it would {ask.reason}, and that needs a person's approval. "
            f"{message} Launch it without that mode or directory, or ask the user to.")


def _wire(call: Any) -> dict[str, Any]:
    dump = getattr(call, "model_dump", None)
    return dump(by_alias=True, exclude_none=True) if dump else {}
