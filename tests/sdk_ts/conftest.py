"""The TypeScript SDK (``@anthropic-ai/claude-agent-sdk``) for tests/sdk_ts, installed once.

``npm install`` puts the pinned version (``TS_SDK_VERSION``) into a cache folder outside the
repo, reused by every later run: ``$COVEY_TS_SDK_DIR``, else ``$XDG_CACHE_HOME/covey-tests``
or the user's ``~/.cache/covey-tests`` (the real home: tests/conftest.py moves ``HOME``),
``ts-sdk-<version>`` (npm's own download cache is the user's, as for any ``npm install``). Every
test runs on each pinned version (``TS_SDK_VERSIONS``): programs pick up a new SDK without asking.
Without optional dependencies: the SDK's native Claude Code (a platform package of 400 MB) is
not needed, since the programs point the SDK at covey; set ``COVEY_SDK_SUITE_CLI`` to a Claude
Code executable to run the same programs against it (docs/sdk.md#the-typescript-sdk).
The tests skip, saying why, only where node or npm is missing or the install fails.
"""

from __future__ import annotations

import fcntl
import json
import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.sdk.conftest import covey_cli, served  # noqa: F401  (the same covey and service as tests/sdk)

TS_SDK_VERSIONS = ("0.3.337", "0.3.332")
"""The pinned TypeScript SDKs, newest first: 0.3.337 bundles Claude Code 2.1.337; 0.3.332, the
release of Claude Code 2.1.332 (the Python SDK's bundled CLI is that version)."""
TS_SDK_VERSION = TS_SDK_VERSIONS[0]
ZOD_RANGE = "^4.0.0"  # the SDK's peer dependency, which the program imports for tool() schemas
NODE_MIN = (18, 14)  # the SDK's engines field
INSTALL_TIMEOUT_S = 300


def _real_home() -> str:
    return pwd.getpwuid(os.getuid()).pw_dir


def cache_dir(version: str = TS_SDK_VERSION) -> Path:
    if os.environ.get("COVEY_TS_SDK_DIR"):
        return Path(os.environ["COVEY_TS_SDK_DIR"]) / version
    base = os.environ.get("XDG_CACHE_HOME") or str(Path(_real_home()) / ".cache")
    return Path(base) / "covey-tests" / f"ts-sdk-{version}"


def _node_version(node: str) -> tuple[int, ...]:
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    return tuple(int(part) for part in out.strip().lstrip("v").split(".")[:2] if part.isdigit())


def _installed(folder: Path, version: str) -> bool:
    manifest = folder / "node_modules" / "@anthropic-ai" / "claude-agent-sdk" / "package.json"
    try:
        found = json.loads(manifest.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return False
    return found == version and (folder / "node_modules" / "zod").is_dir()


def _install(folder: Path, npm: str, version: str) -> str | None:
    """``npm install`` into ``folder`` (under a lock: runs at once share it); None, or why it failed."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed(folder, version):
            return None
        manifest = {"name": "covey-ts-sdk-tests", "private": True, "type": "module",
                    "dependencies": {"@anthropic-ai/claude-agent-sdk": version, "zod": ZOD_RANGE}}
        (folder / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
        command = [npm, "install", "--omit=optional", "--no-audit", "--no-fund", "--loglevel=error"]
        try:
            # The user's own npm settings (a registry mirror, a proxy) hold: npm sees the real HOME.
            done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                                  env={**os.environ, "HOME": _real_home()})
        except subprocess.TimeoutExpired:
            return f"npm install took over {INSTALL_TIMEOUT_S} s"
        if done.returncode != 0 or not _installed(folder, version):
            said = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()][:4]
            return f"npm install failed ({done.returncode}): {' / '.join(said)[:600]}"
    return None


def installed_sdk(version: str) -> tuple[str, Path]:
    """(node, the node_modules folder holding that SDK version), installed if need be; skips if
    node/npm are missing or the install fails."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("the TypeScript SDK tests need node and npm on PATH")
    if _node_version(node) < NODE_MIN:
        pytest.skip(f"the TypeScript SDK needs node >= {'.'.join(map(str, NODE_MIN))}")
    folder = cache_dir(version)
    try:
        problem = _install(folder, npm, version)
    except OSError as exc:
        problem = f"cannot install into {folder}: {exc}"
    if problem:
        pytest.skip(f"@anthropic-ai/claude-agent-sdk@{version} not installed: {problem}")
    return node, folder / "node_modules"


@pytest.fixture(scope="session", params=TS_SDK_VERSIONS, ids=lambda version: f"ts-sdk-{version}")
def ts_sdk(request: pytest.FixtureRequest) -> tuple[str, Path]:
    """(node, the node_modules folder holding one pinned SDK version): each test runs on every one."""
    return installed_sdk(request.param)
