"""The service's log, ``service.log``: its log lines and whatever it prints (a warning, a
traceback), turned over by size so a service that runs for weeks keeps at most
``(BACKUPS + 1) * MAX_BYTES`` of it (docs/service.md, "Files").
"""

from __future__ import annotations

import logging
import os
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Sequence

MAX_BYTES = 5 * 1024 * 1024
"""Past this size ``service.log`` becomes ``service.log.1`` and a new one is begun."""
BACKUPS = 3
"""How many turned-over logs are kept: ``service.log.1`` (the latest) to ``service.log.3``."""
FORMAT = "%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"


class ServiceLog(RotatingFileHandler):
    """A ``RotatingFileHandler`` that takes file descriptors along (the process's stdout and
    stderr): after each turn they write to the new file too, else a print or a traceback would
    go on into ``service.log.1``."""

    def __init__(self, path: Path, follows: Sequence[int] = (), max_bytes: int = MAX_BYTES,
                 backups: int = BACKUPS) -> None:
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
        self.follows = tuple(follows)
        self.setFormatter(logging.Formatter(FORMAT))

    def doRollover(self) -> None:
        for stream in (sys.stdout, sys.stderr):  # what they hold belongs to the old file
            stream.flush()
        super().doRollover()
        if self.stream is not None:
            for descriptor in self.follows:
                os.dup2(self.stream.fileno(), descriptor)


def log_to(path: Path) -> ServiceLog | None:
    """Send this process's log lines to ``path`` (the file its starter made its stdout and stderr),
    turned over by size, stdout and stderr along. A service run by hand on a terminal logs to
    its stderr as before (None)."""
    follows = [descriptor for descriptor in (1, 2) if _writes_to(descriptor, path)]
    if 2 not in follows:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=FORMAT)
        return None
    handler = ServiceLog(path, follows, MAX_BYTES, BACKUPS)
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    return handler


def _writes_to(descriptor: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(descriptor), os.stat(path))
    except OSError:
        return False
