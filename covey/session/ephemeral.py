"""A session that is not kept (``--no-session-persistence``, the SDK's ``persistSession: false``).

As in Claude Code, nothing of it is saved where sessions are kept, and it cannot be resumed
later. covey's agents still write their transcripts while it runs (a background sub-agent's is
the output file its parent reads), so they go to a private temporary folder of this node, used
as the session's ``transcript_dir`` and removed when the session closes. A session resumed this
way continues a private copy of the original's conversation: the original is never written to.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from covey.session.options import SessionOptions
from covey.transcripts.session_files import project_folder, transcript_path
from covey.transcripts.transcript import copy_transcript, last_uuid

PREFIX = "covey-session-"


def private_folder(options: SessionOptions) -> Path | None:
    """A new private (0700) temporary folder for a session that is not kept; None for one that is."""
    return None if options.session_persistence else Path(tempfile.mkdtemp(prefix=PREFIX))


def private_copy(point: Any, root: Path) -> Any:
    """The ``ResumePoint`` ``point`` continued in ``root``: its main transcript and record copied
    there under the same session id (uuids kept, so the conversation is the same chain)."""
    from covey.transcripts.resume import record_session

    record = point.record
    transcript = transcript_path(project_folder(root, record.cwd), record.session_id, record.main_agent_id, main=True)
    copy_transcript(point.transcript, transcript, session_id=record.session_id)
    record = record.model_copy(update={"transcript": str(transcript)})
    record_session(root, record)
    return point.model_copy(update={"record": record, "transcript_dir": root, "transcript": transcript,
                                    "last_uuid": last_uuid(transcript)})


def remove(folder: Path | None) -> None:
    """The folder and everything in it (what an agent still writes as it is killed may be left)."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
