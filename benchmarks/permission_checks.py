"""``permission_checks``: what the permission gate costs a call, with no Ray and no model.

A Bash command is decided the first time (parsed, each part judged) and again (the cached
parse: what every later call of the same command costs); the goal is a cached decision of at
most 1 ms. Also the trust decision a session makes once at its start (``covey/trust/``), for a
project that ships settings, definitions and an ``.mcp.json``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchmarks.common import log, summary
from covey.permissions.policy import PermissionPolicy
from covey.permissions.rules import parse_rule
from covey.settings.merged import Settings
from covey.trust import decide

COMMANDS = [
    "git status", "ls -la src && cat README.md", "grep -rn print src | head -5",
    "printf '%s\\n' a b", "cat <<'EOF' > notes.txt\nhello\nEOF", "[[ -f setup.py ]] && python -m pytest -q",
]


def _policy(root: Path) -> PermissionPolicy:
    deny = [parse_rule(text, behavior="deny") for text in ("Read(./.env)", "Bash(rm *)", "Bash(curl *)")]
    allow = [parse_rule(text, behavior="allow") for text in ("Bash(npm run test:*)", "Edit(src/**)")]
    return PermissionPolicy(mode="default", allow=allow, deny=deny, project_root=root, home=root / "home")


def _time_ms(call: Any, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _project(tmp: Path) -> Path:
    root = tmp / "project"
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / "src").mkdir()
    (root / ".git").mkdir()
    (root / ".claude" / "settings.json").write_text(json.dumps({
        "permissions": {"allow": ["Bash"], "deny": ["Read(./.env)"]},
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "true"}]}]}}))
    (root / ".claude" / "agents" / "helper.md").write_text("---\nname: helper\ndescription: d\n---\nHi.\n")
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "db"}}}))
    return root


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    root = _project(tmp)
    repeat = 200 if quick else 2000
    figures: dict[str, Any] = {"goal_cached_bash_ms": 1.0, "commands": {}}
    for command in COMMANDS:
        first = _time_ms(lambda: _policy(root).decide("Bash", False, command, {"command": command}), 1)[0]
        policy = _policy(root)
        policy.decide("Bash", False, command, {"command": command})
        cached = _time_ms(lambda: policy.decide("Bash", False, command, {"command": command}), repeat)
        figures["commands"][command] = {"first_ms": round(first, 3), "cached_ms": summary(cached)}
    worst = max(entry["cached_ms"]["p50"] for entry in figures["commands"].values())
    figures["cached_bash_p50_ms_worst"] = worst
    home = tmp / "home"
    home.mkdir()
    figures["trust_decision_ms"] = summary(_time_ms(lambda: decide(root, home=home, env={}), repeat // 10))
    for trusted in (True, False):
        samples = _time_ms(lambda: Settings.load(root, home=home, trusted=trusted), repeat // 10)
        figures[f"settings_load_{'trusted' if trusted else 'untrusted'}_ms"] = summary(samples)
    log(f"permission_checks: cached Bash decision, worst p50 {worst:.3f} ms (goal 1 ms)")
    return figures
