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
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.sdk.conftest import REFERENCE_CLI, covey_cli, served  # noqa: F401  (the same covey and service as tests/sdk)

TS_SDK_VERSIONS = ("0.3.337", "0.3.332")
"""The pinned TypeScript SDKs, newest first: 0.3.337 bundles Claude Code 2.1.337; 0.3.332, the
release of Claude Code 2.1.332 (the Python SDK's bundled CLI is that version)."""
TS_SDK_VERSION = TS_SDK_VERSIONS[0]
ZOD_RANGE = "^4.0.0"  # the SDK's peer dependency, which the program imports for tool() schemas
NODE_MIN = (18, 14)  # the SDK's engines field
INSTALL_TIMEOUT_S = 300
PROGRAM = Path(__file__).with_name("program.mjs")
RUN_TIMEOUT_S = 90


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


def sdk_version(modules: Path) -> str:
    """The version of the SDK installed in ``modules`` (a ``ts_sdk`` fixture's folder)."""
    return json.loads((modules / "@anthropic-ai" / "claude-agent-sdk" / "package.json").read_text())["version"]


@pytest.fixture(autouse=True)
def _everything_given_back(ts_sdk, served):  # (ts_sdk first: without node or npm, skip before anything else)
    yield
    served.wait_all_given_back(timeout_s=30)


class Ran:
    """What the program did: its pid, exit code and output; the messages the SDK yielded; what
    its handlers (the tool's and the hooks') wrote down, in the node process."""

    def __init__(self, program: subprocess.Popen, stdout: str, stderr: str, marker: Path) -> None:
        self.pid, self.returncode, self.stdout, self.stderr = program.pid, program.returncode, stdout, stderr
        lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
        self.errors = [line["error"] for line in lines if "error" in line]
        self.messages = [line["message"] for line in lines if "message" in line]
        self.handled = [json.loads(line) for line in marker.read_text().splitlines()] if marker.exists() else []


RunProgram = Callable[..., Ran]


@pytest.fixture
def run_program(ts_sdk, served, covey_cli, fake_api, tmp_path) -> RunProgram:
    """``run_program(prompt, **options)``: program.mjs with query()'s ``options`` added, against
    covey (or ``COVEY_SDK_SUITE_CLI``) and this test's fake API, in ``tmp_path``. A list of prompts
    goes in streaming-input mode, each after the last one's result; ``interrupt_when``: a file
    whose appearing makes the program call ``interrupt()`` (program.mjs)."""
    node, modules = ts_sdk
    env = {**served.env, "COVEY_NO_SERVICE": "0", "ANTHROPIC_BASE_URL": fake_api.url}
    if os.environ.get(REFERENCE_CLI):
        # IS_SANDBOX: Claude Code refuses bypassPermissions to root (a CI container's user) without it.
        env.update(CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", IS_SANDBOX="1")

    def run(prompt: str | list[str], interrupt_when: Path | None = None, extra_env: dict[str, str] | None = None,
            **options: Any) -> Ran:
        marker = tmp_path / "handlers.jsonl"
        spec = {"modules": str(modules), "cli": covey_cli, "cwd": str(tmp_path), "marker": str(marker),
                "options": options, **({"prompts": prompt} if isinstance(prompt, list) else {"prompt": prompt})}
        if interrupt_when is not None:
            spec["interruptWhen"] = str(interrupt_when)
        started = time.monotonic()
        with subprocess.Popen([node, str(PROGRAM)], cwd=tmp_path, env={**env, **(extra_env or {}), "COVEY_TS_CASE": json.dumps(spec)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as program:
            try:
                stdout, stderr = program.communicate(timeout=RUN_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                program.kill()
                stdout, stderr = program.communicate()
                pytest.fail(f"the program did not end in {RUN_TIMEOUT_S} s:\n{stdout}\n{stderr}")
        print(f"the program ran {time.monotonic() - started:.1f} s; it printed:\n{stdout}\nits stderr:\n{stderr}")
        ran = Ran(program, stdout, stderr, marker)
        assert ran.returncode == 0 and not ran.errors, (ran.errors, stderr[-3000:])
        return ran

    return run
