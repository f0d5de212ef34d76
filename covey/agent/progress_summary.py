"""Progress summaries of a sub-agent (docs/subagents.md#progress-summaries): the switch,
when one is due (``SummaryClock``), and the request that asks for one.

Claude Code's ``agentProgressSummaries``: while a sub-agent works, every 30 s a
request forked from the agent's own last one (the same system prompt, tools array, message
prefix and thinking, so the prompt cache serves the prefix) asks the model for a few words on
what the agent is doing now; each answer goes out as a ``task_progress`` event with a
``summary``. Off by default. The clock here is plain Python: the agent's run drives it
(``covey.agent.progress_reports``).
"""

from __future__ import annotations

from typing import Any, Mapping

from covey.common.flags import env_flag, env_value, truthy
from covey.loop.wire import with_breakpoint, with_breakpoints
from covey.model.base import ModelRequest
from covey.model.effort import request_effort
from covey.model.thinking import fit_thinking, task_budget
from covey.subagents.fork import without_incomplete_tool_calls

SUMMARY_ENV = "COVEY_AGENT_PROGRESS_SUMMARIES"
"""The switch in a run's environment (settings' ``agentProgressSummaries`` and the SDK's
``initialize`` field of that name beat it)."""
DISABLE_ENV = ("COVEY_DISABLE_AGENT_PROGRESS_SUMMARIES", "CLAUDE_CODE_DISABLE_AGENT_PROGRESS_SUMMARIES")
"""Off whatever the switch says (Claude Code's variable, and covey's, which wins where both are set)."""
INTERVAL_ENV = "COVEY_AGENT_PROGRESS_INTERVAL_MS"
INTERVAL_MS = 30_000
"""Claude Code's interval between the end of one summary and the next request."""
MIN_MESSAGES = 3
"""No summary of a conversation shorter than this (nothing done yet to summarise)."""
MAX_FAILURES = 5
"""Failed summaries in a row after which the interval doubles (the API may be struggling)."""
TIMEOUT_S = 10.0
"""A summary request that takes longer is given up (and counts as failed)."""
MAX_CHARS = 200

PROMPT = ("Describe what you are doing right now in 3 to 5 words, in the present tense (an -ing verb first). "
          "Name the file or function you are working on, not the branch. Do not call any tool; answer with "
          "those words only.\nGood: \"Reading greet.py\", \"Fixing the null check in validate.py\", "
          "\"Running the parser tests\".\nBad: \"Read the files\" (past tense), \"Working on the task\" "
          "(says nothing), a whole sentence (too long).")
PREVIOUS = "\nYour last summary was \"{previous}\": say what is new since."


def summary_interval_ms(option: bool | None, setting: bool | None, env: Mapping[str, str],
                        settings_env: Mapping[str, str] | None = None) -> int | None:
    """The interval of the session's progress summaries, None when they are off. First match wins:
    the run's option (the SDK's ``agentProgressSummaries``), settings' ``agentProgressSummaries``,
    ``COVEY_AGENT_PROGRESS_SUMMARIES`` in the run's env or settings' ``env``; never with
    ``CLAUDE_CODE_DISABLE_AGENT_PROGRESS_SUMMARIES`` (or covey's) on."""
    sources = [env, settings_env or {}]
    if any(env_flag(source, DISABLE_ENV) for source in sources):
        return None
    on = option if option is not None else setting
    if on is None:
        on = any(truthy(source.get(SUMMARY_ENV)) for source in sources)
    if not on:
        return None
    given = next((value for source in sources if (value := env_value(source, INTERVAL_ENV)) is not None), None)
    try:
        return max(int(given), 1) if given is not None else INTERVAL_MS
    except ValueError:
        return INTERVAL_MS


class SummaryClock:
    """When a sub-agent's next progress summary is due: one interval after the agent
    starts, then one interval after the last summary *ended* (so two never overlap and a slow
    one does not make the next come sooner); never while one is in flight or after the run
    ended; not before the conversation has ``min_messages``, nor while it is unchanged since
    the last summary. Past ``max_failures`` failures in a row the interval doubles; an answer
    that repeats the last summary is not shown again."""

    def __init__(self, interval_s: float, *, started: float, min_messages: int = MIN_MESSAGES,
                 max_failures: int = MAX_FAILURES) -> None:
        self.interval_s, self.min_messages, self.max_failures = interval_s, min_messages, max_failures
        self.next_at = started + interval_s
        self.in_flight = False
        self.running = True
        self.failures = 0
        self.last: str | None = None
        """The last summary shown (the next request asks for something new)."""
        self.summarized = 0
        """How long the conversation was at the last summary asked for."""

    def wait_s(self, now: float) -> float:
        """How long until the next summary may be due."""
        return max(0.0, self.next_at - now)

    def due(self, now: float, messages: int) -> bool:
        """Whether to ask for a summary now (``messages``: the conversation's length). A tick
        with too short a conversation, or one unchanged since the last summary, moves the next
        one an interval on."""
        if not self.running or self.in_flight or now < self.next_at:
            return False
        if messages < self.min_messages or messages == self.summarized:
            self.next_at = now + self.interval_s
            return False
        self.in_flight, self.summarized = True, messages
        return True

    def done(self, now: float, summary: str | None) -> str | None:
        """The request came back with ``summary`` (None: no text, or it failed): the summary to
        show, or None (nothing, a repeat, or the run ended meanwhile)."""
        self.in_flight = False
        self.failures = 0 if summary else self.failures + 1
        backoff = 2 if self.failures >= self.max_failures else 1
        self.next_at = now + self.interval_s * backoff
        if not self.running or not summary or summary == self.last:
            return None
        self.last = summary
        return summary

    def stop(self) -> None:
        """The run ended: nothing more is due, and an answer still on its way is not shown."""
        self.running = False


def summary_prompt(previous: str | None) -> str:
    return PROMPT + (PREVIOUS.format(previous=previous) if previous else "")


def summary_request(loop: Any, prompt: str, agent_id: str | None) -> ModelRequest:
    """The agent's last request as sent (``loop.cache_safe_params``: system blocks, tools array,
    messages, with the loop's own model, output limit, thinking and effort), its calls still
    running left out, and ``prompt`` after it: the cache breakpoints fall where a fork's do
    (docs/subagents.md#caching), so the prompt cache serves everything before ``prompt``.
    The tools stay in the request for the cache's sake; any call the reply makes is ignored."""
    system, tools, messages = loop.cache_safe_params()
    config = loop.config
    prefix = without_incomplete_tool_calls(messages)
    asked = [*prefix, {"role": "user", "content": [{"type": "text", "text": prompt}]}]
    thinking, max_tokens = fit_thinking(config.thinking, config.max_tokens)
    return ModelRequest(
        model=config.model_id, system=with_breakpoint(system), tools=with_breakpoint(tools),
        messages=with_breakpoints(asked, len(prefix)), max_tokens=max_tokens, thinking=thinking,
        effort=request_effort(config.model_id, config.effort), betas=config.betas, agent_id=agent_id,
        task_budget=task_budget(config.model_id, config.task_budget),
    )


def summary_text(message: Any) -> str | None:
    """The reply's first non-blank text, on one line and capped; None if it has none."""
    for block in getattr(message, "content", None) or []:
        text = block.get("text") if isinstance(block, dict) else getattr(block, "text", None)
        if isinstance(text, str) and text.strip():
            line = " ".join(text.split())
            return line if len(line) <= MAX_CHARS else line[:MAX_CHARS - 1] + "…"
    return None
