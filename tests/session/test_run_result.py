"""``RunResult``: a run of several turns (a notification-driven one after the first) sums them."""

from covey.events import ResultEvent
from covey.session import RunResult


def _result(text: str, turns: int, tokens: int, cost: float) -> ResultEvent:
    return ResultEvent(subtype="success", is_error=False, result=text, num_turns=turns, duration_ms=1,
                       duration_api_ms=1, total_cost_usd=cost, usage={"input_tokens": tokens, "output_tokens": 1},
                       session_id="s")


def test_a_run_sums_its_turns_and_keeps_the_last_answer_and_the_sessions_cost():
    run = RunResult.from_events([_result("waiting", 2, 100, 0.1), _result("done", 1, 40, 0.3)])
    assert run.result == "done" and run.num_turns == 3 and run.total_cost_usd == 0.3
    assert run.usage == {"input_tokens": 140, "output_tokens": 2}
