"""Why a session did not start, in Claude Code's words: its failure ``result`` names the cause
(``startup_failure_reason``), so a program can offer the fix instead of a retry."""

from __future__ import annotations

from typing import Any

from covey.errors import CoveyError
from covey.settings.files import SandboxUnavailable
from covey.transcripts.session_json import ResumeError


def failure_fields(exc: CoveyError) -> dict[str, Any]:
    """The failure result's fields for ``exc``: Claude Code's reason, where it has one for it, and
    (a session to resume that is not there) the id that was asked for as the result's session."""
    if isinstance(exc, ResumeError):
        return {"startup_failure_reason": "resume_target_not_found",
                **({"session_id": exc.session_id} if exc.session_id else {})}
    if isinstance(exc, SandboxUnavailable):
        return {"startup_failure_reason": "sandbox_required_unavailable"}
    return {}
