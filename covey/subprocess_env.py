"""The environment a run's child processes get: its Bash commands, command hooks and stdio MCP
servers. With ``CLAUDE_CODE_SUBPROCESS_ENV_SCRUB`` on (as in Claude Code), the credentials covey
itself reads are left out, so a command a model writes (``echo $ANTHROPIC_API_KEY``, a prompt
injection's ``curl``) cannot send them anywhere; covey keeps them for its own requests (the
driver and the node's model gateway: docs/architecture.md, "Model requests"). GitHub tokens
and proxy settings stay: wrapper scripts need them.
"""

from __future__ import annotations

import os
from typing import Mapping

from covey.flags import env_flag

SCRUB_FLAG = "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB"

SCRUBBED = frozenset({
    # The API's credentials: covey reads them, its child processes never need them.
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_FOUNDRY_API_KEY",
    "ANTHROPIC_CUSTOM_HEADERS",
    # Telemetry exporters' headers carry bearer tokens.
    "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    # Cloud providers' secrets (Bedrock, Vertex, Foundry credentials).
    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH",
    # A CI job's token-minting endpoint.
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_RUNTIME_TOKEN",
})


def scrubbed(env: Mapping[str, str]) -> dict[str, str]:
    """The environment to start a child process with, from the run's ``env``."""
    if not env_flag(env, SCRUB_FLAG):
        return dict(env)
    return {name: value for name, value in env.items() if name not in SCRUBBED}


def for_subprocess(env: Mapping[str, str] | None) -> dict[str, str] | None:
    """``scrubbed``, where ``None`` is this process's environment (and stays ``None``, the child
    inheriting it, when nothing is left out)."""
    if env is None:
        return scrubbed(os.environ) if env_flag(os.environ, SCRUB_FLAG) else None
    return scrubbed(env)
