"""The model behind one small interface: ``await model.create(request) -> Message`` (covey's own, shaped like the Messages API's)."""

from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable

from covey.model.effort import effort_betas
from covey.model.messages import Message
from covey.model.thinking import TASK_BUDGET_BETA
from pydantic import BaseModel, ConfigDict, Field, model_validator


class ModelRequest(BaseModel):
    """One Messages API request, as covey builds it.

    ``messages`` and ``system`` use the API's own param shapes (plain dicts), so
    they cross actor boundaries and land in transcripts unchanged.
    """

    model_config = ConfigDict(frozen=False)

    model: str
    """Resolved model id (aliases are resolved before a request is built)."""
    system: list[dict[str, Any]] = Field(default_factory=list)
    """System prompt as text blocks (cache breakpoints may be set on them)."""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    max_tokens: int = 8192
    thinking: dict[str, Any] | None = None
    effort: str | None = None
    """``output_config.effort``, already fitted to the model (``covey.model.effort.request_effort``)."""
    task_budget: dict[str, Any] | None = None
    """``output_config.task_budget``, sent behind its beta header (``covey.model.thinking.task_budget``)."""
    betas: list[str] = Field(default_factory=list)
    """Beta headers the session asked for (``--betas``), sent as ``anthropic-beta``."""
    agent_id: str | None = None
    """Which agent sends it (for scripted rules, tracing and usage roll-up)."""
    on_stream: Callable[[dict[str, Any]], None] | None = Field(default=None, exclude=True)
    """Sees each raw Messages API stream event as it arrives (``--include-partial-messages``);
    a model that does not stream (the scripted one) calls it never."""

    def to_api_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``client.messages.create/stream``."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": self.messages,
        }
        if self.system:
            kwargs["system"] = self.system
        if self.tools:
            kwargs["tools"] = self.tools
        if self.thinking:
            kwargs["thinking"] = self.thinking
        output_config: dict[str, Any] = {}
        betas = list(self.betas)
        if self.effort:
            # As Claude Code sends it; Opus 4.5 takes it only behind its beta header.
            output_config["effort"] = self.effort
            betas += effort_betas(self.model)
        if self.task_budget:
            output_config["task_budget"] = self.task_budget
            betas.append(TASK_BUDGET_BETA)
        if output_config:
            kwargs["output_config"] = output_config
        if betas:
            kwargs["extra_headers"] = {"anthropic-beta": ",".join(dict.fromkeys(betas))}
        return kwargs


@runtime_checkable
class Model(Protocol):
    """Anything that answers a ModelRequest with a ``Message`` (``covey/model/messages.py``)."""

    async def create(self, request: ModelRequest) -> Message: ...


class TokenUsage(BaseModel):
    """Token counts, summed over requests (per request, per agent, per session), and the
    server-side web searches those requests ran."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    web_search_requests: int = 0
    """The API's ``usage.server_tool_use.web_search_requests``: searches, priced per 1,000, not tokens."""

    @model_validator(mode="before")
    @classmethod
    def _searches(cls, data: Any) -> Any:
        """A reply's usage as the API wrote it carries its searches under ``server_tool_use``."""
        if isinstance(data, dict) and isinstance(data.get("server_tool_use"), dict) and "web_search_requests" not in data:
            return {**data, "web_search_requests": data["server_tool_use"].get("web_search_requests") or 0}
        return data

    @classmethod
    def of(cls, usage: Any) -> "TokenUsage":
        """From an ``anthropic.types.Usage`` or covey's ``Usage`` (None fields count as 0)."""
        server = getattr(usage, "server_tool_use", None)
        searches = server.get("web_search_requests") if isinstance(server, dict) else getattr(server, "web_search_requests", 0)
        return cls(
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            cache_creation_input_tokens=getattr(usage, "cache_creation_input_tokens", 0) or 0,
            cache_read_input_tokens=getattr(usage, "cache_read_input_tokens", 0) or 0,
            web_search_requests=searches or 0,
        )

    def __add__(self, other: "TokenUsage") -> "TokenUsage":
        return TokenUsage(
            **{name: getattr(self, name) + getattr(other, name) for name in TokenUsage.model_fields}
        )

    @property
    def total(self) -> int:
        """The tokens (searches are no tokens)."""
        return sum(getattr(self, name) for name in TokenUsage.model_fields if name != "web_search_requests")
