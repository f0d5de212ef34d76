"""A session an older covey wrote, moved where sessions are now on its first resume (docs/resume.md).

An older covey kept a session in ``~/.covey/transcripts/<session>/`` (or
``<transcript_dir>/<session>/``): ``session.json`` and one ``<agent-id>.jsonl`` per agent.
Resuming one moves it into its project's folder, as a session covey writes now: the main
agent's transcript to ``<project>/<session>.jsonl``, the others to
``<project>/<session>/subagents/``, anything else into ``<project>/<session>/``, then a
record naming the new transcript. The old record goes last, so a move cut short is taken up
again by the next resume (each step finds what is left to move).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from covey.common.private_dirs import private_dir
from covey.transcripts.session_files import SessionRoots, project_folder, transcript_path
from covey.transcripts.session_json import RECORD_NAME, SessionRecord, record_session


def migrate(roots: SessionRoots, old_record: Path, record: SessionRecord) -> SessionRecord:
    """Move the session in ``old_record``'s folder where sessions are now; its new record."""
    old, sid = old_record.parent, record.session_id
    folder = project_folder(roots.root, record.cwd)
    main = transcript_path(folder, sid, record.main_agent_id, main=True)
    _move(Path(record.transcript), main)
    for path in sorted(old.iterdir()):
        if path.name == RECORD_NAME or path.name.startswith("."):  # a temporary file a crash left
            continue
        if path.suffix == ".jsonl":
            _move(path, transcript_path(folder, sid, path.stem, main=False))
        else:
            _move(path, folder / sid / path.name)
    moved = record.model_copy(update={"transcript": str(main)})
    record_session(roots, moved)
    old_record.unlink(missing_ok=True)
    try:
        old.rmdir()
    except OSError:  # something left in it (a temporary file): the user's to remove
        pass
    return moved


def _move(source: Path, dest: Path) -> None:
    if not source.exists():
        return  # moved by an earlier resume cut short, or never written
    private_dir(dest.parent, "session folder")
    shutil.move(source, dest)  # a rename, or a copy and delete across file systems
