"""``covey ARGS`` run in the test's process, on the test session's Ray, instead of a subprocess
that starts (and stops) a private Ray of its own: the same ``covey.cli.main.main`` a ``covey -p``
runs, with its stdout and stderr captured, the environment changes and working directory the
test names, and stdin empty (not a terminal), answered as ``subprocess.run`` answers.

A test using it needs the ``ray`` marker and the shared Ray (``ray_session``): covey's
``ensure_ray`` joins the Ray this process already runs and leaves it up at the end. With
``served_kits`` (tests/conftest.py) the run borrows a ready session kit and agent actors, as a
run through the covey service does; without it the run starts its own registry and pool.
What only a separate process shows (the command's exit on a signal, the service, a private
Ray's start and stop) stays with the subprocess tests.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path
from typing import Iterable

import pytest


def covey_here(*args: str, cwd: Path, env: dict[str, str] | None = None, unset: Iterable[str] = (),
               managed: Path | None = None, stdin: str = "") -> subprocess.CompletedProcess:
    """``covey *args`` in ``cwd``; ``env``: variables set for the run, ``unset``: removed;
    ``managed``: the managed settings folder covey reads (tests/managed_covey.py's argument)."""
    import covey.settings.managed
    from covey.cli import main as cli

    if env and "HOME" in env:
        # The run's agents live in the shared Ray's actors, whose HOME is the test session's:
        # another HOME here would split the run (settings read from one, ~ expanded in the other).
        raise ValueError("covey_here runs with the test session's HOME; use a subprocess for another")

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (env or {}).items():
            patch.setenv(name, value)
        for name in unset:
            patch.delenv(name, raising=False)
        if managed is not None:
            patch.setattr(covey.settings.managed, "MANAGED_DIR", managed)
        patch.chdir(cwd)
        patch.setattr(sys, "stdin", io.StringIO(stdin))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(list(args))
            except SystemExit as exc:  # argparse's errors, as the command's exit
                code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["covey", *args], code, out.getvalue(), err.getvalue())
