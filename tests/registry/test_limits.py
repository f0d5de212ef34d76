"""Limits: from this process's environment by default, or from a run's (``Limits.from_env``)."""

from covey.runtime.limits import DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_DEPTH, DEFAULT_STALL_MS, Limits

NAMES = ("COVEY_MAX_SUBAGENT_SPAWN_DEPTH", "COVEY_MAX_CONCURRENT_AGENTS", "COVEY_BUDGET_USD",
         "COVEY_STALL_TIMEOUT_MS", "COVEY_AUTO_BACKGROUND_MS")


def test_from_env_reads_the_given_env_and_not_this_process(monkeypatch):
    for name in NAMES:
        monkeypatch.setenv(name, "99")
    limits = Limits.from_env({"COVEY_MAX_CONCURRENT_AGENTS": "3", "COVEY_BUDGET_USD": "1.5",
                              "COVEY_STALL_TIMEOUT_MS": "", "COVEY_AUTO_BACKGROUND_MS": "5000"})
    assert limits.max_concurrent == 3 and limits.budget_usd == 1.5 and limits.auto_background_ms == 5000
    assert limits.max_depth == DEFAULT_MAX_DEPTH  # unset in the env: the default, not this process's 99
    assert limits.stall_ms == DEFAULT_STALL_MS  # set but empty: the default too


def test_the_zero_argument_form_still_reads_this_process(monkeypatch):
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COVEY_MAX_CONCURRENT_AGENTS", "7")
    monkeypatch.setenv("COVEY_BUDGET_USD", "2")
    limits = Limits()
    assert limits.max_concurrent == 7 and limits.budget_usd == 2.0 and limits.max_depth == DEFAULT_MAX_DEPTH
    assert Limits(max_concurrent=5).max_concurrent == 5


def test_an_empty_env_gives_the_defaults(monkeypatch):
    monkeypatch.setenv("COVEY_MAX_CONCURRENT_AGENTS", "7")
    limits = Limits.from_env({})
    assert limits.max_concurrent == DEFAULT_MAX_CONCURRENT and limits.budget_usd is None


def test_claude_codes_depth_variable_is_read_and_coveys_wins():
    assert Limits.from_env({"CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH": "1"}).max_depth == 1
    both = {"COVEY_MAX_SUBAGENT_SPAWN_DEPTH": "3", "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH": "1"}
    assert Limits.from_env(both).max_depth == 3
    assert Limits.from_env({"COVEY_MAX_SUBAGENT_SPAWN_DEPTH": "", "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH": "1"}).max_depth == 1
