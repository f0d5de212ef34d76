"""The short table ``run.py`` prints: one line per headline figure, with its goal."""

from __future__ import annotations

from typing import Any


def _get(d: Any, *path: Any) -> Any:
    for key in path:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def _rows(cases: dict[str, Any]) -> list[tuple[str, Any, str]]:
    c = cases
    rows = [
        *_cli_rows(c),
        *_sdk_rows(c),
        ("loop: bare AgentLoop µs/turn", _get(c, "loop_overhead", "loop", "us_per_turn"), ""),
        ("loop: AgentRunner in-process µs/turn", _get(c, "loop_overhead", "runner", "us_per_turn"), ""),
        ("loop: AgentActor µs/turn", _get(c, "loop_overhead", "actor", "us_per_turn"), ""),
        ("loop: actor / bare loop", _get(c, "loop_overhead", "ratio_actor_vs_loop"), ""),
        ("startup: first assistant line s (p50)", _get(c, "startup", "first_assistant_s", "p50"), ""),
        ("startup: total wall s (p50)", _get(c, "startup", "total_s", "p50"), ""),
    ]
    if isinstance(cli := _get(c, "cli_fanout"), dict) and "expected" in cli:
        rows.append((f"cli sync fan-out N={cli['n']} x{len(cli['runs'])} under a CPU burner: completed / expected "
                     "(lost, dup, failed)",
                     f"{cli['completed']} / {cli['expected']} ({cli['lost']}, {cli['duplicated']}, {cli['failed']})",
                     "all completed, 0 lost"))
    for key, fig in sorted((_get(c, "fanout", "warm") or {}).items(), key=lambda kv: int(kv[0])):
        rows.append((f"fanout N={key} warm: s / ratio", _fan(fig),
                     "≤ 1.15×" if key == "100" else ""))
    for key, fig in sorted((_get(c, "fanout", "default_pool") or {}).items(), key=lambda kv: int(kv[0])):
        rows.append((f"fanout N={key} default pool: s / ratio", _fan(fig), ""))
    rows += [
        ("spawn warm ms p50 / p90", _pair(c, "spawn_latency", "warm_ms"), "p50 ≤ 10 ms"),
        ("spawn warm, git project ms p50 / p90", _pair(c, "spawn_latency", "warm_git_ms"), ""),
        ("spawn cold ms p50 / p90", _pair(c, "spawn_latency", "cold_ms"), ""),
        ("notify ms p50 / p90", _pair(c, "notify_latency", "notify_ms"), "p50 ≤ 5 ms"),
        ("claims: double claims, claim_next / race", _doubles(c), "0"),
        *_team_rows(c),
        ("memory: most warm agents / USS MiB p50", _mem(c), "≥ 200 / ≤ 45"),
        ("leaks: spawns / actors, procs, fds delta", _leaks(c), "0"),
        ("fork: 10 forks' first requests, USD without / with cache", _fork_usd(c), ""),
        ("fork: launch to last reply s, 10 forks / 10 plain", _fork_wall(c), ""),
    ]
    return rows


def _sdk_rows(c: dict) -> list[tuple[str, Any, str]]:
    """The ``sdk`` case: claude-agent-sdk programs with cli_path at covey, and at Claude Code."""
    sdk = c.get("sdk")
    if not isinstance(sdk, dict) or "covey" not in sdk:
        return []
    rows = []
    for who in ("covey", "claude_code"):
        if fig := sdk.get(who):
            rows += [(f"sdk {who}: first query() / warm query() s", f"{fig['first_query']['end_s']} / "
                      f"{fig['warm_query_end_median_s']}", ""),
                     (f"sdk {who}: a later ClaudeSDKClient turn s", fig["client_later_turn_median_s"], "")]
    if "warm_query_vs_claude_code" in sdk:
        rows.append(("sdk: covey / Claude Code, warm query(), later turn",
                     f"{sdk['warm_query_vs_claude_code']}× / {sdk['later_turn_vs_claude_code']}×", "≤ 1×"))
    return rows


def _cli_rows(c: dict) -> list[tuple[str, Any, str]]:
    """The ``cli`` case: through ``covey -p`` and the service it starts."""
    cli = c.get("cli")
    if not isinstance(cli, dict) or "say_ok_cold" not in cli:
        return [("cli (through the service)", "failed (see JSON)", "")] if isinstance(cli, dict) else []
    rows = [
        ("cli: say ok, cold: first answer / exit s", f"{cli['say_ok_cold'].get('assistant')} / {cli['say_ok_cold'].get('exit')}",
         "≤ 4 s"),
        ("cli: say ok, warm: first answer / exit s (p50)",
         f"{_get(cli, 'say_ok_warm', 'first_answer_s_p50')} / {_get(cli, 'say_ok_warm', 'exit_s_p50')}", "≤ 0.2 s"),
        ("cli: idle service: % of a core / USS MiB", f"{_get(cli, 'idle', 'cpu_pct_of_core')} / {_get(cli, 'idle', 'uss_mib')}",
         "≤ 2 % / ≤ 600 MiB"),
        ("cli: idle bare Ray (the bound): % of a core / USS MiB",
         f"{_get(cli, 'idle_bare_ray', 'cpu_pct_of_core')} / {_get(cli, 'idle_bare_ray', 'uss_mib')}", ""),
    ]
    for key, goal in (("sync_1", ""), ("sync_20", "first ≤ 1.0× / back to back, settled ≤ 0.67× Claude Code"),
                      ("background_100", "first ≤ 3× the floor"), ("sync_5", ""), ("background_10", "")):
        if isinstance(fig := cli.get(key), dict) and "settled" in fig:
            ways = [fig[way].get("ratio_vs_ideal") for way in ("first_on_fresh_service", "back_to_back", "settled")]
            peer = [run.get("ratio_vs_ideal") for run in fig.get("claude_code", [])]
            rows.append((f"cli: {key.replace('_', ' N=')} × ideal: first on a fresh service / back to back / settled"
                         " (Claude Code, 3 runs)",
                         f"{' / '.join(str(w) for w in ways)} ({', '.join(str(p) for p in peer) or 'not run'}); covey / "
                         f"Claude Code {fig.get('vs_claude_code')}; covey / floor {fig.get('vs_floor')} (floor "
                         f"{fig.get('floor', {}).get('ratio_vs_ideal')}, an actor per child "
                         f"{fig.get('floor_ray', {}).get('ratio_vs_ideal')}, one started per child "
                         f"{fig.get('floor_ray_cold', {}).get('ratio_vs_ideal')}, in-process {fig['baseline_ratio_vs_ideal']})",
                         goal))
    rows.append(("cli: covey stop: s / processes left", f"{_get(cli, 'stop', 's')} / {_get(cli, 'stop', 'processes_left')}",
                 "≤ 3 s / 0"))
    return rows


def _fan(fig: dict) -> str:
    counts = f" (lost {fig.get('lost')}, dup {fig.get('duplicated')}, failed {fig.get('failed')})"
    return ("failed (see JSON)" if "error" in fig else f"{fig.get('wall_s')} / {fig.get('ratio')}") + counts


def _pair(c: dict, case: str, key: str) -> str | None:
    fig = _get(c, case, key)
    return f"{fig.get('p50')} / {fig.get('p90')}" if isinstance(fig, dict) and fig.get("n") else None


def _doubles(c: dict) -> str | None:
    counts = [_get(c, "task_claims", mode, "covey", "double_claims") for mode in ("claim_next", "claim_race")]
    return None if counts == [None, None] else f"{counts[0]} / {counts[1]}"


def _team_rows(c: dict) -> list[tuple[str, Any, str]]:
    """Per figure: covey's rate / its ratio to the baseline, and covey's latency p50 / p90."""
    rows = []
    for case, key, rate, lat, label in (
        ("task_claims", "claim_next", "claims_per_s", "claim_ms", "claims claim_next"),
        ("task_claims", "claim_race", "claims_per_s", "claim_ms", "claims race"),
        ("mailbox", "drain_one_at_a_time", "msgs_per_s", "latency_ms", "mailbox drain, 1 at a time"),
        ("mailbox", "wait_one_at_a_time", "msgs_per_s", "latency_ms", "mailbox wait, 1 at a time"),
        ("mailbox", "wait_batch50", "msgs_per_s", "latency_ms", "mailbox wait, 50 in flight"),
    ):
        fig = _get(c, case, key)
        if isinstance(fig, dict):
            rows.append((f"{label}: /s / vs baseline", f"{fig['covey'][rate]} / {fig[f'{rate}_vs_baseline']}", ""))
            ms = fig["covey"][lat]
            rows.append((f"{label}: ms p50 / p90", f"{ms.get('p50')} / {ms.get('p90')}", ""))
    return rows


def _mem(c: dict) -> str | None:
    best = _get(c, "memory", "max_agents")
    return f"{best} / {_get(c, 'memory', 'uss_mib_at_max', 'p50')}" if best else None


def _fork_usd(c: dict) -> str | None:
    totals = _get(c, "fork", "forks", "first_requests_total")
    return f"{totals['usd_without_cache']} / {totals['usd_with_cache']}" if totals else None


def _fork_wall(c: dict) -> str | None:
    forks, plain = _get(c, "fork", "forks"), _get(c, "fork", "plain")
    if not forks or not plain:
        return None
    return f"{forks['launch_to_last_child_reply_s']} / {plain['launch_to_last_child_reply_s']}"


def _leaks(c: dict) -> str | None:
    d = _get(c, "leaks", "delta")
    if not d:
        return None
    return f"{_get(c, 'leaks', 'spawns')} / {d.get('agent_actors')}, {d.get('worker_procs')}, {d.get('worker_fds')}"


def render(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [f"covey benchmarks ({'quick' if report['quick'] else 'full'}) — {m['cores']} cores, "
             f"Python {m['python']}, Ray {m['ray']}"]
    for name, fig in report["cases"].items():
        if "error" in fig:
            lines.append(f"  {name}: ERROR {fig['error']}")
    width = 44
    for label, value, goal in _rows(report["cases"]):
        if value is not None:
            lines.append(f"  {label:<{width}} {value!s:<22} {goal}")
    return "\n".join(lines)
