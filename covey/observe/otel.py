"""OpenTelemetry spans of a run, named and described by the GenAI semantic conventions: one
``invoke_agent`` span per agent run, one ``chat`` span per model request, one ``execute_tool``
span per tool call (docs/observability.md).

Off unless the run's environment asks for traces (``OTEL_TRACES_EXPORTER`` other than ``none``,
or an ``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``). Then the
session's settings carry the ``OTEL_*`` variables to every agent, on any node
(``RunSettings.otel``), and each child's spec carries the W3C ``traceparent`` of the Agent call
that launched it (``AgentSpec.traceparent``), so its spans join its parent's trace. Off, nothing
here imports opentelemetry: the spans below are no-ops that cost a context variable's read.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any, Awaitable, Callable, Iterator, Mapping, TypeVar

from covey.observe.otel_ids import in_session, session_ids

R = TypeVar("R")
SWITCHES = ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
"""The standard variables that turn covey's traces on (``OTEL_TRACES_EXPORTER=none`` keeps them off)."""
PROVIDER = "anthropic"
"""``gen_ai.provider.name``: covey's models speak the Messages API."""
MISSING_EXTRA = ("covey: {name} is set, but OpenTelemetry is not installed, so no trace is exported: "
                 "pip install 'covey[otel]'")

FLUSH_MS = 3000
"""How long an agent's end waits for its spans to be sent (an unreachable collector must not hold its report)."""

_tracer: ContextVar[Any] = ContextVar("covey_otel_tracer", default=None)
"""The tracer of the agent run this task belongs to; None: the run is not traced."""
_providers: dict[tuple[tuple[str, str], ...], Any] = {}
_warned: set[str] = set()


def settings_of(env: Mapping[str, str]) -> dict[str, str] | None:
    """The ``OTEL_*`` variables a session hands its agents when ``env`` asks for traces; None: off.
    Asked for without the ``otel`` extra installed: one line on stderr, and off."""
    asking = [name for name in SWITCHES if env.get(name)]
    if not asking or env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none" or \
            env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if not _installed():
        _warn(MISSING_EXTRA.format(name=asking[0]))
        return None
    return {name: value for name, value in env.items() if name.startswith("OTEL_")}


def _installed() -> bool:
    try:
        return importlib.util.find_spec("opentelemetry.sdk") is not None
    except ModuleNotFoundError:  # not even the opentelemetry namespace
        return False


class AgentSpan:
    """One agent run's ``invoke_agent`` span, a child of the Agent call that launched it. Opened and
    ended in the run's own task: while it is open, the loop's requests and tool calls in that task
    (and the tasks it starts) are its children."""

    def __init__(self, spec: Any) -> None:
        self.span: Any = None
        self._tokens: tuple[Token[Any], Token[Any]] | None = None
        if spec.settings.otel is None:
            return
        try:
            self._open(spec)
        except Exception as exc:  # a trace never costs the run its start: it runs untraced
            self.span = None
            _warn(f"covey: no OpenTelemetry trace of this agent: {type(exc).__name__}: {exc}")

    def _open(self, spec: Any) -> None:
        from opentelemetry import context, trace
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self.provider = _provider(spec.settings.otel)
        tracer = self.provider.get_tracer("covey")
        parent = TraceContextTextMapPropagator().extract({"traceparent": spec.traceparent}) if spec.traceparent else None
        name = spec.definition.name
        with in_session(spec.session_id):  # a root run (no Agent call above it) joins its session's trace
            self.span = tracer.start_span(f"invoke_agent {name}", context=parent, attributes=_clean({
                "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": PROVIDER,
                "gen_ai.agent.name": name, "gen_ai.agent.id": spec.agent_id,
                "gen_ai.agent.description": spec.description or spec.definition.description,
                "gen_ai.conversation.id": spec.session_id, "gen_ai.request.model": spec.model_id,
                "covey.agent.depth": spec.depth, "covey.agent.parent_id": spec.parent_agent_id,
                "covey.agent.background": spec.background,
            }))
        self._tokens = (_tracer.set(tracer), context.attach(trace.set_span_in_context(self.span)))

    async def end(self, report: Any) -> None:
        """End the span with the run's report, then send what this process has (a pooled actor
        lives on, and a session that ends may stop it right after)."""
        if self.span is None or self._tokens is None:
            return
        tracer_token, context_token = self._tokens
        self._tokens = None
        try:
            self._close(report, context_token)
            await asyncio.to_thread(self.provider.force_flush, FLUSH_MS)
        except Exception as exc:  # a trace never costs the run its report
            _warn(f"covey: the OpenTelemetry trace of {self.span.name!r} was not sent: {type(exc).__name__}: {exc}")
        finally:
            _tracer.reset(tracer_token)

    def _close(self, report: Any, context_token: Token[Any]) -> None:
        from opentelemetry import context
        from opentelemetry.trace import Status, StatusCode

        usage = report.usage
        self.span.set_attributes({
            "gen_ai.usage.input_tokens": usage.input_tokens + usage.cache_read_input_tokens
            + usage.cache_creation_input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens, "covey.agent.status": report.status,
            "covey.cost_usd": report.cost_usd, "covey.tool_uses": report.tool_uses,
        })
        if report.status != "completed":
            self.span.set_attribute("error.type", report.status)
            self.span.set_status(Status(StatusCode.ERROR, report.text[:200]))
        self.span.end()
        context.detach(context_token)


async def traced_chat(create: Callable[[Any], Awaitable[R]], request: Any) -> R:
    """``create(request)``, inside its ``chat`` span when the run is traced."""
    with chat_span(request) as span:
        message = await create(request)
        replied(span, message)
        return message


@contextmanager
def chat_span(request: Any) -> Iterator[Any]:
    """A model request's ``chat`` span (None when the run is not traced); ``replied`` completes it."""
    tracer = _tracer.get()
    if tracer is None:
        yield None
        return
    from opentelemetry.trace import SpanKind

    with tracer.start_as_current_span(f"chat {request.model}", kind=SpanKind.CLIENT, attributes=_clean({
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": PROVIDER,
        "gen_ai.request.model": request.model, "gen_ai.request.max_tokens": request.max_tokens,
        "gen_ai.agent.id": request.agent_id,
    })) as span:
        yield span


def replied(span: Any, message: Any) -> None:
    """What the reply said of itself: its id, model, stop reason and tokens."""
    if span is None:
        return
    usage = message.usage
    cache_read, cache_write = usage.cache_read_input_tokens or 0, usage.cache_creation_input_tokens or 0
    span.set_attributes(_clean({
        "gen_ai.response.id": message.id, "gen_ai.response.model": message.model,
        "gen_ai.response.finish_reasons": [message.stop_reason] if message.stop_reason else None,
        # The conventions count every input token; the Messages API counts cached ones apart.
        "gen_ai.usage.input_tokens": (usage.input_tokens or 0) + cache_read + cache_write,
        "gen_ai.usage.output_tokens": usage.output_tokens or 0,
        "gen_ai.usage.cache_read.input_tokens": cache_read, "gen_ai.usage.cache_creation.input_tokens": cache_write,
    }))


@contextmanager
def tool_span(name: str, call_id: str) -> Iterator[Any]:
    """A tool call's ``execute_tool`` span (None when the run is not traced); ``tool_ended`` completes it.
    An Agent call's child continues the trace from here (``traceparent``)."""
    tracer = _tracer.get()
    if tracer is None:
        yield None
        return
    with tracer.start_as_current_span(f"execute_tool {name}", attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "extension" if name.startswith("mcp__") else "function",
    }) as span:
        yield span


def tool_ended(span: Any, result: Any) -> None:
    if span is None or not result.is_error:
        return
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", "tool_error")
    span.set_status(Status(StatusCode.ERROR, str(result.content)[:200]))


def traceparent() -> str | None:
    """The W3C ``traceparent`` of the span open here (an Agent call's), for the child it launches; None: not traced."""
    if _tracer.get() is None:
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    return carrier.get("traceparent")


def _provider(settings: Mapping[str, str]) -> Any:
    """The tracer provider for the carried variables: the program's own if it set one (an
    application's, a test's in-memory exporter), else one per set of variables, made once in
    this process (a pooled actor serves sessions that may export to different places)."""
    from opentelemetry import trace

    current = trace.get_tracer_provider()
    if not isinstance(current, trace.ProxyTracerProvider):
        return current
    key = tuple(sorted(settings.items()))
    if key not in _providers:
        with _variables(settings):  # the exporters and processors read them as they are made
            _providers[key] = _made_provider()
    return _providers[key]


def _made_provider() -> Any:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    named = "OTEL_SERVICE_NAME" in os.environ or "service.name" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    provider = TracerProvider(resource=Resource.create({} if named else {"service.name": "covey"}), id_generator=session_ids())
    for exporter in _exporters(os.environ.get("OTEL_TRACES_EXPORTER") or "otlp"):
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


@contextmanager
def _variables(settings: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` with exactly the carried ``OTEL_*`` variables, for a moment."""
    saved = {name: value for name, value in os.environ.items() if name.startswith("OTEL_")}
    for name in saved:
        del os.environ[name]
    os.environ.update(settings)
    try:
        yield
    finally:
        for name in settings:
            os.environ.pop(name, None)
        os.environ.update(saved)


def _exporters(names: str) -> list[Any]:
    """The exporters ``OTEL_TRACES_EXPORTER`` names (``otlp``, ``console``; a list with commas)."""
    exporters = []
    for name in (part.strip().lower() for part in names.split(",")):
        if name == "console":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            exporters.append(ConsoleSpanExporter())
        elif name == "otlp":
            try:
                exporters.append(_otlp())
            except ImportError:
                _warn(MISSING_EXTRA.format(name="OTEL_TRACES_EXPORTER=otlp"))
        elif name and name != "none":
            _warn(f"covey: OTEL_TRACES_EXPORTER names {name!r}, which covey does not know (otlp, console)")
    return exporters


def _otlp() -> Any:
    protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc

        return Grpc()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as Http

    return Http()


def _clean(attributes: dict[str, Any]) -> dict[str, Any]:
    """OpenTelemetry takes no None values."""
    return {name: value for name, value in attributes.items() if value is not None}


def _warn(line: str) -> None:
    if line not in _warned:
        _warned.add(line)
        print(line, file=sys.stderr)
