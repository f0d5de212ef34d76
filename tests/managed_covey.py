"""``covey`` for a test's subprocess, reading managed settings from the folder its first argument names.

Run as ``python tests/managed_covey.py MANAGED_DIR ARGS...``. The managed folder is a module
constant (covey/settings/managed.py) that no environment variable moves, so a user's environment
cannot swap the administrator's folder; a test reaches it only by running this file. The run
stays in this process (``COVEY_NO_SERVICE=1``): a covey service would read its own folder.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Run as a script, this file's folder (tests/, whose subpackages are named hooks, tools, model...)
# would come first on the import path and could shadow an installed package.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

import covey.settings.managed  # noqa: E402
from covey.cli.main import main  # noqa: E402

if __name__ == "__main__":
    covey.settings.managed.MANAGED_DIR = Path(sys.argv[1])
    os.environ["COVEY_NO_SERVICE"] = "1"
    raise SystemExit(main(sys.argv[2:]))
