"""Running one ``http`` hook: the payload POSTed as JSON, the response read as Claude Code reads it.

A 2xx response with an empty body is a success with nothing to say; a 2xx JSON
object is read like a command's JSON stdout. Any other body, a non-2xx status,
a connection failure or a timeout is a non-blocking error: an http hook blocks
only through the decision fields of a 2xx JSON body. At most
``HOOK_READ_LIMIT_CHARS`` bytes of a body are read: a longer one is an error (a JSON
object cut short does not parse), and the texts of an answer are cut as a command's are.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import urllib.error
import urllib.request
from typing import Any, Mapping

from covey.hooks.command import HOOK_READ_LIMIT_CHARS, HookAnswer, read_answer
from covey.hooks.config import HttpHook

_VAR = re.compile(r"\$\{(\w+)\}|\$(\w+)")


async def run_http(hook: HttpHook, payload: dict[str, Any], *, env: Mapping[str, str], timeout_s: float) -> HookAnswer:
    headers = {name: _interpolate(value, hook.allowed_env_vars, env) for name, value in hook.headers.items()}
    request = urllib.request.Request(
        hook.url, data=json.dumps(payload, default=str).encode(), method="POST",
        headers={**headers, "Content-Type": "application/json"},
    )
    try:
        # urllib blocks: the request runs in a thread so the agent's event loop goes on.
        status, text = await asyncio.to_thread(_post, request, timeout_s)
    except (TimeoutError, socket.timeout):
        return HookAnswer(hook.command, error=f"timed out after {timeout_s:g}s")
    except urllib.error.HTTPError as exc:
        return HookAnswer(hook.command, error=f"answered HTTP {exc.code}")
    except (urllib.error.URLError, OSError) as exc:
        return HookAnswer(hook.command, error=f"request failed: {exc}")
    if not 200 <= status < 300:
        return HookAnswer(hook.command, error=f"answered HTTP {status}")
    if text is None:
        return HookAnswer(hook.command, error=f"answered with a body over {HOOK_READ_LIMIT_CHARS:,} bytes; ignored")
    text = text.strip()
    if text and not (text.startswith("{") and text.endswith("}")):
        return HookAnswer(hook.command, error="answered with a body that is not a JSON object")
    return read_answer(hook.command, 0, text, "")


def _post(request: urllib.request.Request, timeout_s: float) -> tuple[int, str | None]:
    """The status and the body (None: longer than the read limit, which is all that is read of it)."""
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        body = response.read(HOOK_READ_LIMIT_CHARS + 1)
        if len(body) > HOOK_READ_LIMIT_CHARS:
            return response.status, None
        return response.status, body.decode(errors="replace")


def _interpolate(value: str, allowed: list[str], env: Mapping[str, str]) -> str:
    """``$VAR`` / ``${VAR}`` for the allowed names; any other reference becomes empty, as in Claude Code."""
    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return env.get(name, "") if name in allowed else ""

    return _VAR.sub(one, value)
