"""Record what Claude Code prints in print mode for the scenarios in this folder (not run by the suite).

Usage (from the repository root; by default the Claude Code that claude-agent-sdk bundles,
``_bundled/claude``: 2.1.337 with claude-agent-sdk 0.2.190)::

    python tests/data/claude_code/record.py [--claude PATH] [SCENARIO ...]

Each scenario folder holds ``rules.json`` (how the fake Messages API answers, see
``tests.fake_messages_api.rules_replier``) and ``argv.json`` (the command line). The run
gets a fresh HOME and cwd, ``ANTHROPIC_API_KEY=test``, the fake API on 127.0.0.1 and
telemetry and non-essential traffic off; its stdout is written to ``stdout.jsonl`` with
machine-specific paths replaced by ``<cwd>``, ``<home>`` and ``<tmp>``, its exit code to ``rc``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.fake_messages_api import FakeMessagesAPI, rules_replier  # noqa: E402

DEFAULT_CLAUDE = str(Path(__import__("claude_agent_sdk").__file__).parent / "_bundled" / "claude")
HELLO = "line one\nHELLO_FILE_CONTENT_42\n"


def record(scenario: Path, claude: str) -> int:
    rules = json.loads((scenario / "rules.json").read_text())
    argv = json.loads((scenario / "argv.json").read_text())
    with tempfile.TemporaryDirectory(prefix="cc-rec-") as tmp:
        root = Path(tmp).resolve()
        cwd, home = root / "cwd", root / "home"
        cwd.mkdir()
        home.mkdir()
        (cwd / "hello.txt").write_text(HELLO)
        with FakeMessagesAPI([rules_replier(rules, str(cwd))]) as api:
            env = {
                "PATH": os.environ["PATH"], "HOME": str(home), "TMPDIR": str(root), "ANTHROPIC_API_KEY": "test",
                "ANTHROPIC_BASE_URL": api.url, "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }
            done = subprocess.run([claude, *argv[1:]], cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=300, stdin=subprocess.DEVNULL)
        out = done.stdout.replace(str(cwd), "<cwd>").replace(str(home), "<home>").replace(str(root), "<tmp>")
        out = re.sub(r"projects/[^/\"]+/memory", "projects/<cwd-slug>/memory", out)
        out = re.sub(r"cc-socks/\d+\.sock", "cc-socks/<pid>.sock", out)
        (scenario / "stdout.jsonl").write_text(out)
        (scenario / "rc").write_text(f"{done.returncode}\n")
        if done.stderr.strip():
            print(f"{scenario.name}: stderr: {done.stderr.strip()[:2000]}", file=sys.stderr)
        print(f"{scenario.name}: rc {done.returncode}, {len(out.splitlines())} lines, {len(api.requests)} requests")
        return done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude", default=DEFAULT_CLAUDE)
    parser.add_argument("scenarios", nargs="*")
    args = parser.parse_args()
    names = args.scenarios or sorted(p.parent.name for p in HERE.glob("*/argv.json"))
    return max(record(HERE / name, args.claude) for name in names)


if __name__ == "__main__":
    sys.exit(main())
