"""PermissionPolicy: rule order, modes, resolving asks, the decision log."""

from pathlib import Path

import pytest

from covey.errors import UserError
from covey.permissions import Allow, Ask, CallbackAsker, Deny, PermissionPolicy, PermissionRequest, parse_rule
from covey.session.setup import policy_from_settings
from covey.settings.merged import Settings

PROJECT = Path("/proj")
PROJECT_FILE = "projectSettings:/proj/.claude/settings.json"


def policy(mode="default", *, allow=(), deny=(), ask=(), source="cliArg", asker=None) -> PermissionPolicy:
    rules = lambda texts: [parse_rule(t, source=source) for t in texts]  # noqa: E731
    return PermissionPolicy(
        mode=mode, allow=rules(allow), deny=rules(deny), ask=rules(ask),
        project_root=PROJECT, home=Path("/home/u"), asker=asker,
    )


def test_deny_beats_allow_and_names_both_rules_and_sources():
    p = PermissionPolicy(
        allow=[parse_rule("Bash(git:*)", source="userSettings:/home/u/.claude/settings.json")],
        deny=[parse_rule("Bash(git push:*)", source=PROJECT_FILE)],
        project_root=PROJECT,
    )
    d = p.decide("Bash", False, "git push origin main", {"command": "git push origin main"})
    assert isinstance(d, Deny)
    assert (d.rule, d.source) == ("Bash(git push:*)", PROJECT_FILE)
    assert "Bash(git push:*)" in d.message and PROJECT_FILE in d.message
    assert "Bash(git:*)" in d.message and "userSettings:/home/u/.claude/settings.json" in d.message
    assert d.input == {"command": "git push origin main"}


def test_deny_applies_even_in_bypass_mode_and_to_read_only_tools():
    assert isinstance(policy("bypassPermissions", deny=["Bash(rm:*)"]).decide("Bash", False, "rm -rf /", {}), Deny)
    assert isinstance(policy(deny=["Read(./.env)"]).decide("Read", True, "/proj/.env", {}), Deny)


def test_ask_rule_asks_even_when_an_allow_rule_matches_and_in_bypass():
    for mode in ("default", "bypassPermissions"):
        d = policy(mode, allow=["Bash"], ask=["Bash(npm publish:*)"], source=PROJECT_FILE).decide("Bash", False, "npm publish", {})
        assert isinstance(d, Ask) and d.rule == "Bash(npm publish:*)" and d.source == PROJECT_FILE


def test_allow_rule_allows_and_is_recorded():
    d = policy(allow=["Bash(npm test:*)"]).decide("Bash", False, "npm test", {})
    assert isinstance(d, Allow) and d.rule == "Bash(npm test:*)" and d.source == "cliArg"


def test_default_mode_allows_read_only_and_asks_for_the_rest():
    p = policy()
    assert isinstance(p.decide("Grep", True, "/proj/src", {}), Allow)
    d = p.decide("Bash", False, "make", {})
    assert isinstance(d, Ask) and d.source == "mode:default" and "make" in d.message


def test_bypass_allows_everything_not_denied_or_asked():
    d = policy("bypassPermissions").decide("Bash", False, "curl x | sh", {})
    assert isinstance(d, Allow) and d.source == "mode:bypassPermissions"


def test_accept_edits_allows_edits_inside_the_project_only():
    p = policy("acceptEdits")
    assert isinstance(p.decide("Write", False, "/proj/src/a.py", {}), Allow)
    assert isinstance(p.decide("Edit", False, "/etc/hosts", {}), Ask)
    assert isinstance(p.decide("Edit", False, "/proj/../etc/hosts", {}), Ask)
    assert isinstance(p.decide("Bash", False, "rm a", {}), Ask)


def test_plan_mode_denies_every_non_read_only_tool_even_if_allowed():
    p = policy("plan", allow=["Edit"])
    d = p.decide("Edit", False, "/proj/a.py", {})
    assert isinstance(d, Deny) and "plan mode" in d.message and d.source == "mode:plan"
    assert isinstance(p.decide("Read", True, "/proj/a.py", {}), Allow)


def test_dont_ask_denies_what_is_not_pre_approved():
    p = policy("dontAsk", allow=["Bash(ls:*)"])
    assert isinstance(p.decide("Bash", False, "ls -la", {}), Allow)
    d = p.decide("Bash", False, "rm x", {})
    assert isinstance(d, Deny)
    assert "not pre-approved" in d.message and "dontAsk" in d.message and "Bash(rm x)" in d.message


def test_bubble_mode_decides_like_default_and_leaves_the_asking_to_the_asker():
    assert isinstance(policy("bubble").decide("Bash", False, "make", {}), Ask)


async def test_without_an_asker_an_ask_becomes_an_explanatory_deny():
    p = policy()
    d = await p.resolve(p.decide("Bash", False, "make deploy", {}))
    assert isinstance(d, Deny)
    assert "nobody could be asked" in d.message and "Bash(make deploy)" in d.message
    assert p.denials()[-1].decision == d


@pytest.mark.parametrize("answer, expected", [(True, Allow), (False, Deny)])
async def test_callback_asker_is_obeyed(answer, expected):
    seen: list[PermissionRequest] = []

    def approve(request: PermissionRequest) -> bool:
        seen.append(request)
        return answer

    p = policy(asker=CallbackAsker(approve))
    d = await p.resolve(p.decide("Bash", False, "make", {"command": "make"}), agent_id="a1")
    assert isinstance(d, expected) and d.tool_name == "Bash" and d.source == "user"
    assert seen[0].agent_id == "a1" and seen[0].suggested_rule == "Bash(make)" and seen[0].input == {"command": "make"}


async def test_async_callback_can_return_a_decision_that_adds_a_session_rule():
    async def always(request: PermissionRequest) -> Allow:
        return Allow(source="user", add_allow_rules=[request.suggested_rule])

    p = policy(asker=CallbackAsker(always))
    first = await p.resolve(p.decide("Bash", False, "make", {}))
    assert isinstance(first, Allow) and first.subject == "make"
    again = p.decide("Bash", False, "make", {})
    assert isinstance(again, Allow) and again.rule == "Bash(make)" and again.source == "session"


async def test_resolve_passes_decided_calls_through_and_logs_each_call_once():
    p = policy(deny=["Bash(rm:*)"])
    d = p.decide("Bash", False, "rm x", {})
    assert await p.resolve(d) is d
    assert [(e.tool_name, e.subject, type(e.decision)) for e in p.decisions] == [("Bash", "rm x", Deny)]


def test_decision_log_is_bounded():
    p = PermissionPolicy(project_root=PROJECT, log_size=3)
    for i in range(5):
        p.decide("Read", True, f"/proj/{i}", {})
    assert [e.subject for e in p.decisions] == ["/proj/2", "/proj/3", "/proj/4"]


def test_task_tool_name_is_normalised_in_calls():
    d = policy(allow=["Agent(Explore)"]).decide("Task", False, "Explore", {})
    assert isinstance(d, Allow) and d.tool_name == "Agent"


def test_from_settings_adds_cli_rules_and_mode(tmp_path):
    settings = Settings.load(tmp_path, home=tmp_path / "home", extra={"permissions": {"defaultMode": "acceptEdits"}})
    p = policy_from_settings(settings, cli_allow=["Bash(ls:*)"], cli_deny=["Bash(ls /root)"], project_root=tmp_path)
    assert p.mode == "acceptEdits"
    assert p.decide("Bash", False, "ls /root", {}).source == "cliArg"
    assert isinstance(p.decide("Bash", False, "ls /tmp", {}), Allow)
    assert policy_from_settings(settings, mode="plan", project_root=tmp_path).mode == "plan"


def test_child_overlay_keeps_sticky_modes_and_scopes_session_rules():
    parent = policy("acceptEdits", allow=["Bash(ls:*)"])
    parent.add_rule("allow", "Bash(make)")
    assert parent.for_child(definition_mode="plan").mode == "acceptEdits"
    assert policy("default").for_child(definition_mode="plan").mode == "plan"
    child = parent.for_child(allowed_tools=["Bash(npm test)"])
    assert isinstance(child.decide("Bash", False, "make", {}), Ask)
    assert isinstance(child.decide("Bash", False, "npm test", {}), Allow)
    assert isinstance(child.decide("Bash", False, "ls", {}), Allow)


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "dontAsk", "auto", "bubble"])
def test_a_read_only_command_with_no_rule_runs_in_every_mode(mode):
    decision = policy(mode).decide("Bash", False, "cat README.md", {"command": "cat README.md"})
    assert isinstance(decision, Allow) and decision.reason == "read-only command"


def test_a_command_that_writes_still_asks():
    for command in ("cat x > y", "rm -rf build", "sed -i s/a/b/ f", "find . -delete", "ls && touch x"):
        assert isinstance(policy().decide("Bash", False, command, {}), Ask), command
    assert isinstance(policy("plan").decide("Bash", False, "cat x > y", {}), Deny)


def test_ask_and_deny_rules_still_apply_to_read_only_commands():
    assert isinstance(policy(ask=["Bash(cat *)"]).decide("Bash", False, "cat README.md", {}), Ask)
    assert isinstance(policy(deny=["Bash(git log *)"]).decide("Bash", False, "git log -1", {}), Deny)


def test_read_only_cd_stays_inside_the_project_and_added_directories():
    p = PermissionPolicy(project_root=PROJECT, cwd=PROJECT / "app", additional_directories=[Path("/data")])
    assert isinstance(p.decide("Bash", False, "cd .. && ls", {}), Allow)
    assert isinstance(p.decide("Bash", False, "cd /data && ls", {}), Allow)
    assert isinstance(p.decide("Bash", False, "cd /etc && ls", {}), Ask)


def test_an_invalid_rule_from_the_command_line_is_refused_with_its_reason():
    with pytest.raises(UserError, match="must be at the end"):
        policy_from_settings(Settings(), cli_allow=["Bash(git:* push)"], project_root=PROJECT)
    with pytest.raises(UserError, match="not supported in allow rules"):
        policy_from_settings(Settings(), cli_allow=["mcp__*"], project_root=PROJECT)
    p = policy_from_settings(Settings(), cli_deny=["mcp__*"], project_root=PROJECT)
    assert isinstance(p.decide("mcp__github__delete_repo", False, None, {}), Deny)


def test_accept_edits_accepts_mkdir_touch_mv_cp_inside_the_project_only():
    assert isinstance(policy("acceptEdits").decide("Bash", False, "mkdir -p build", {}), Allow)
    assert isinstance(policy("acceptEdits").decide("Bash", False, "cp a /etc/a", {}), Ask)
    assert isinstance(policy("default").decide("Bash", False, "mkdir -p build", {}), Ask)


def test_read_and_edit_deny_rules_reach_the_files_a_bash_command_reads_and_writes():
    p = policy(deny=["Read(./.env)", "Edit(/dist/**)"])
    for command in ("cat .env", "head -n 3 .env", "timeout 5 tail .env", "grep KEY .env", "cat < .env", "ls && cat ./sub/../.env"):
        decision = p.decide("Bash", False, command, {})
        assert isinstance(decision, Deny) and decision.rule == "Read(./.env)", command
    for command in ("echo x > dist/a.js", "ls >> /proj/dist/log"):
        decision = p.decide("Bash", False, command, {})
        assert isinstance(decision, Deny) and decision.rule == "Edit(/dist/**)", command
    assert isinstance(p.decide("Bash", False, "cat README.md", {}), Allow)
    assert isinstance(p.decide("Bash", False, "grep .env notes.txt", {}), Allow)  # .env is grep's pattern here
    assert isinstance(p.decide("Bash", False, "python read_env.py", {}), Ask)  # a script's own reads are out of reach


def test_a_read_deny_rule_also_stops_edit_and_write_on_its_path():
    p = policy(deny=["Read(./.env)"], allow=["Edit"])
    assert isinstance(p.decide("Write", False, "/proj/.env", {}), Deny)
    assert isinstance(p.decide("Edit", False, "/proj/.env", {}), Deny)
    assert isinstance(p.decide("Edit", False, "/proj/a.py", {}), Allow)


def test_a_compound_command_is_allowed_when_every_part_is_allowed_or_read_only():
    p = policy(allow=["Bash(npm test *)", "Bash(npm run lint)"])
    for command in ("git status && npm test", "npm test; npm run lint", "npm run lint && npm test -- -u | tail -5"):
        decision = p.decide("Bash", False, command, {})
        assert isinstance(decision, Allow) and "every part is allowed" in decision.reason, command
    for command in ("npm test && curl -s x | sh", "npm test && $(evil)", "npm test && rm -rf /", "cd /tmp && npm test",
                    "npm test &&", "echo 'unterminated && npm test"):
        assert isinstance(p.decide("Bash", False, command, {}), Ask), command
    assert isinstance(policy(allow=["Bash(npm test *)"], deny=["Bash(rm *)"]).decide("Bash", False, "npm test; rm x", {}), Deny)


def test_a_bare_read_deny_rule_removes_the_read_tool_only():
    p = policy(deny=["Read"])
    assert isinstance(p.decide("Read", True, "/proj/a", {}), Deny)
    assert isinstance(p.decide("Write", False, "/proj/a", {}), Ask)
    assert isinstance(p.decide("Bash", False, "cat a", {}), Allow)


def test_deny_and_ask_rules_match_an_input_parameter():
    p = policy(deny=["Agent(model:opus)", "Bash(run_in_background:true)"], ask=["Agent(isolation:*)"])
    assert isinstance(p.decide("Agent", False, "Explore", {"subagent_type": "Explore", "model": "opus"}), Deny)
    assert isinstance(p.decide("Agent", False, "Explore", {"subagent_type": "Explore", "model": "haiku"}), Ask)
    assert isinstance(p.decide("Agent", False, "Explore", {"subagent_type": "Explore", "isolation": "worktree"}), Ask)
    assert isinstance(p.decide("Bash", False, "ls", {"command": "ls", "run_in_background": True}), Deny)
    assert isinstance(p.decide("Bash", False, "ls", {"command": "ls"}), Allow)  # an omitted parameter never matches
    allow = policy(allow=["Agent(model:opus)"])  # allow rules keep each tool's own syntax
    assert not isinstance(allow.decide("Agent", False, "Explore", {"subagent_type": "Explore", "model": "opus"}), Allow)


def test_a_rule_on_a_tools_primary_field_is_ignored_with_a_warning():
    from covey.permissions.rule_checks import rule_warnings
    p = policy(deny=["Bash(command:rm *)"])
    assert isinstance(p.decide("Bash", False, "rm -rf x", {"command": "rm -rf x"}), Ask)
    (warning,) = rule_warnings("Bash", "command:rm *", "deny", "projectSettings")
    assert "primary field 'command'" in warning and "Bash(rm *)" in warning


def test_an_allow_rule_approves_the_command_not_a_redirection_target_outside_the_project():
    p = policy(allow=["Bash(npm run *)", "Edit(//tmp/reports/**)"])
    assert isinstance(p.decide("Bash", False, "npm run build > build.log 2>&1", {}), Allow)
    assert isinstance(p.decide("Bash", False, "npm run build > /tmp/reports/b.log", {}), Allow)
    for command, target in (("npm run build > /etc/motd", "/etc/motd"), ("npm run build >> ~/b.log", "~/b.log"),
                            ("npm run build > out-*.log", "out-*.log")):
        decision = p.decide("Bash", False, command, {})
        assert isinstance(decision, Ask) and target in decision.reason, command
    assert isinstance(policy("dontAsk", allow=["Bash(npm run *)"]).decide("Bash", False, "npm run x > /etc/y", {}), Deny)
