"""Permission modes, decisions (a union on ``behavior``) and the request shown to a person.

Decisions carry the call they are about (tool, subject, input) so they stay
meaningful after crossing an actor boundary (a ``bubble`` prompt, a result's
``permission_denials``), and every one names the rule and source or the mode
that made it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from covey.permissions.modes import PermissionMode  # noqa: F401 -- re-exported


class _Decision(BaseModel):
    model_config = ConfigDict(frozen=True)

    tool_name: str = ""
    """The tool the decision is about."""
    subject: str | None = None
    """What the rule content matched: a command, an absolute path, an agent type."""
    input: dict[str, Any] = Field(default_factory=dict)
    """The tool input, as the model sent it."""
    rule: str | None = None
    """The rule that decided, as written; ``None`` when a mode or a person decided."""
    source: str = ""
    """Where the rule came from (``projectSettings:/...``, ``cliArg``, ``session``), ``mode:<mode>`` or ``user``."""
    reason: str = ""
    """Why, in a few words, for logs and debugging."""


class Allow(_Decision):
    behavior: Literal["allow"] = "allow"
    add_allow_rules: list[str] = Field(default_factory=list)
    """Rules to add to this session's allow list (what "always allow" returns)."""
    set_mode: PermissionMode | None = None
    """A mode the answer switches the agent to (an SDK answer's ``setMode`` update: a plan
    approved into ``acceptEdits``)."""


class Deny(_Decision):
    behavior: Literal["deny"] = "deny"
    message: str
    """What the model reads in the ``is_error`` tool result."""


class Ask(_Decision):
    behavior: Literal["ask"] = "ask"
    message: str
    """The question a person is asked."""


Decision = Annotated[Union[Allow, Deny, Ask], Field(discriminator="behavior")]


class PermissionRequest(BaseModel):
    """What an :data:`Asker` is shown when a tool call needs a person's approval."""

    model_config = ConfigDict(frozen=True)

    tool_name: str
    subject: str | None
    input: dict[str, Any]
    message: str
    """The question, e.g. ``Allow Bash: npm publish?``."""
    reason: str
    """Why the policy asks (an ask rule, or the mode)."""
    suggested_rule: str
    """The rule "always allow" adds, e.g. ``Bash(npm publish)``."""
    agent_id: str | None = None
    """The agent whose call this is (a bubbled prompt comes from a child)."""
    tool_use_id: str | None = None
    """The call's ``tool_use`` id (claude-agent-sdk's ``can_use_tool`` context carries it)."""


def describe_call(tool_name: str, subject: str | None) -> str:
    return f"{tool_name} ({subject})" if subject else tool_name


def nobody_to_ask(ask: Ask, suggested_rule: str) -> Deny:
    """The denial when a person had to approve the call but none could be asked."""
    call = describe_call(ask.tool_name, ask.subject)
    message = (
        f"Permission to use {call} was denied: a person would have had to approve it "
        "and nobody could be asked (this agent has no terminal or approval callback). "
        "Do not retry the same call. Use tools that are already allowed, or finish and "
        f"report that this step needs approval, e.g. the allow rule {suggested_rule!r}."
    )
    return _deny_from(ask, message, "no one to ask")


def not_pre_approved(ask: Ask, suggested_rule: str) -> Deny:
    """The denial in ``dontAsk`` mode: anything not allowed in advance is refused."""
    call = describe_call(ask.tool_name, ask.subject)
    message = (
        f"Permission to use {call} was denied: it was not pre-approved, and this agent "
        "runs in dontAsk mode, which refuses anything no allow rule covers. Use tools "
        f"that are allowed, or report that this step needs the allow rule {suggested_rule!r}."
    )
    return _deny_from(ask, message, "dontAsk: not pre-approved")


def refused_by_person(ask: Ask) -> Deny:
    call = describe_call(ask.tool_name, ask.subject)
    message = (
        f"The user refused permission to use {call}; the call was not run. Do not retry "
        "it. Stop and explain what you wanted to do so the user can decide how to proceed."
    )
    return Deny(**_identity(ask), message=message, source="user", reason="refused when asked")


def _deny_from(ask: Ask, message: str, reason: str) -> Deny:
    return Deny(**_identity(ask), message=message, rule=ask.rule, source=ask.source, reason=f"{ask.reason}; {reason}")


def _identity(decision: _Decision) -> dict[str, Any]:
    return {"tool_name": decision.tool_name, "subject": decision.subject, "input": decision.input}
