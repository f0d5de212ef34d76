from covey.definitions.builtin import BUILTIN_AGENTS, builtin_agents, guide_definition

READ_ONLY = {"Edit", "Write", "NotebookEdit", "Agent"}


def test_standard_set_without_worker():
    assert set(builtin_agents()) == {"general-purpose", "Explore", "Plan", "Verification", "covey-guide"}
    assert "worker" not in BUILTIN_AGENTS


def test_worker_replaces_everything_in_coordinator_mode():
    agents = builtin_agents(coordinator=True)
    assert list(agents) == ["worker"]
    worker = agents["worker"]
    assert worker.tools == ["*"] and worker.model == "inherit"
    # As Claude Code's: it reports through its notification (no SendMessage of its own), asks
    # through the root (bubble), and may take long tasks.
    assert worker.disallowed_tools == ["SendMessage"]
    assert worker.permission_mode == "bubble" and worker.max_turns == 500


def test_general_purpose_is_completion_oriented_on_default_model():
    gp = BUILTIN_AGENTS["general-purpose"]
    assert gp.tools == ["*"] and gp.disallowed_tools == [] and gp.model is None
    assert not gp.omit_claude_md
    text = gp.prompt.lower()
    assert "gold-plate" in text and "broad" in text and "create no new files" in text


def test_explore_is_read_only_haiku_one_shot():
    explore = BUILTIN_AGENTS["Explore"]
    assert set(explore.disallowed_tools) == READ_ONLY
    assert explore.model == "haiku"
    assert explore.omit_claude_md and explore.one_shot
    assert "=== CRITICAL: READ-ONLY MODE ===" in explore.prompt


def test_plan_inherits_and_ends_with_critical_files():
    plan = BUILTIN_AGENTS["Plan"]
    assert set(plan.disallowed_tools) == READ_ONLY
    assert plan.model == "inherit" and plan.omit_claude_md
    assert plan.prompt.rstrip().splitlines()[-2] == "### Critical Files for Implementation"
    for step in ("Understand", "Explore", "Design", "Detail"):
        assert step in plan.prompt


def test_verification_runs_in_background_and_is_reminded_not_to_fix():
    verification = BUILTIN_AGENTS["Verification"]
    assert set(verification.disallowed_tools) == READ_ONLY and "Bash" not in verification.disallowed_tools
    assert verification.model == "inherit" and verification.background
    assert "not fix" in verification.critical_system_reminder
    for phrase in ("Command run", "adversarial probe", "concurrency", "idempotency", "intended", "VERDICT"):
        assert phrase in verification.prompt


def test_guide_prompt_names_docs_and_configuration(tmp_path):
    guide = guide_definition(tmp_path / "docs", "agents: reviewer (project)")
    assert str(tmp_path / "docs") in guide.prompt
    assert "reviewer (project)" in guide.prompt
    assert guide.model == "haiku" and set(guide.disallowed_tools) == READ_ONLY
    assert "{" not in guide_definition("d", "").prompt


def test_prompts_are_short():
    for agent in [*BUILTIN_AGENTS.values(), *builtin_agents(coordinator=True).values()]:
        assert 10 <= len(agent.prompt.splitlines()) <= 40, agent.name
