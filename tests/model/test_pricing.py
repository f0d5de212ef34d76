import json

import pytest

from covey.errors import UserError
from covey.model.base import TokenUsage
from covey.model.pricing import PriceTable

MILLION = 1_000_000


def usage(**counts):
    return TokenUsage(**counts)


@pytest.mark.parametrize(
    "model_id, prices",
    [
        ("claude-haiku-4-5", (1, 5, 1.25, 0.10)),
        ("claude-haiku-4-5-20251001", (1, 5, 1.25, 0.10)),
        ("claude-sonnet-4-5", (3, 15, 3.75, 0.30)),
        ("claude-sonnet-4-20250514", (3, 15, 3.75, 0.30)),
        ("claude-opus-4-1", (15, 75, 18.75, 1.50)),
    ],
)
def test_default_prices_per_kind(model_id, prices):
    table = PriceTable()
    kinds = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]
    for kind, price in zip(kinds, prices):
        assert table.cost_usd(model_id, usage(**{kind: MILLION})) == pytest.approx(price)


def test_cost_sums_all_kinds():
    cost = PriceTable().cost_usd(
        "claude-sonnet-4-5",
        usage(input_tokens=1000, output_tokens=2000, cache_creation_input_tokens=4000, cache_read_input_tokens=10000),
    )
    assert cost == pytest.approx((1000 * 3 + 2000 * 15 + 4000 * 3.75 + 10000 * 0.30) / MILLION)


def test_unknown_model_costs_nothing():
    assert PriceTable().cost_usd("my-local-model", usage(input_tokens=MILLION)) == 0.0


def test_longest_prefix_wins_and_settings_use_camel_case():
    table = PriceTable().with_overrides(
        {"claude-sonnet-4-5": {"input": 2, "output": 10, "cacheWrite": 2.5, "cacheRead": 0.2}}
    )
    assert table.cost_usd("claude-sonnet-4-5-20250929", usage(input_tokens=MILLION)) == pytest.approx(2)
    assert table.cost_usd("claude-sonnet-4-0", usage(input_tokens=MILLION)) == pytest.approx(3)


def test_invalid_override_is_a_user_error():
    with pytest.raises(UserError, match="modelPrices"):
        PriceTable().with_overrides({"x-model": {"input": -1, "output": 1, "cache_write": 1, "cache_read": 1}})


def test_load_reads_prices_file_then_settings(monkeypatch, tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({
        "my-local": {"input": 1, "output": 1, "cache_write": 0, "cache_read": 0},
        "claude-opus-4": {"input": 5, "output": 25, "cache_write": 6.25, "cache_read": 0.5},
    }))
    monkeypatch.setenv("COVEY_PRICES_FILE", str(path))
    table = PriceTable.load({"my-local": {"input": 7, "output": 1, "cache_write": 0, "cache_read": 0}})
    assert table.cost_usd("claude-opus-4-5", usage(input_tokens=MILLION)) == pytest.approx(5)
    assert table.cost_usd("my-local", usage(input_tokens=MILLION)) == pytest.approx(7)


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"])
def test_bad_prices_file_names_the_path(monkeypatch, tmp_path, content):
    path = tmp_path / "prices.json"
    path.write_text(content)
    monkeypatch.setenv("COVEY_PRICES_FILE", str(path))
    with pytest.raises(UserError, match="prices.json"):
        PriceTable.load()


def test_load_finds_the_prices_file_in_the_given_env_only(monkeypatch, tmp_path):
    path = tmp_path / "client-prices.json"
    path.write_text(json.dumps({"my-local": {"input": 2, "output": 1, "cache_write": 0, "cache_read": 0}}))
    monkeypatch.delenv("COVEY_PRICES_FILE", raising=False)
    table = PriceTable.load(env={"COVEY_PRICES_FILE": str(path)})
    assert table.cost_usd("my-local", usage(input_tokens=MILLION)) == pytest.approx(2)
    monkeypatch.setenv("COVEY_PRICES_FILE", str(path))
    assert PriceTable.load(env={}).price_of("my-local") is None  # this process's file is not the run's


def test_web_searches_cost_ten_dollars_a_thousand_besides_the_tokens():
    from covey.model.messages import Usage
    from covey.model.usage import ModelUsage

    reply_usage = {"input_tokens": 0, "output_tokens": 0, "server_tool_use": {"web_search_requests": 3}}
    for searched in (TokenUsage.model_validate(reply_usage), TokenUsage.of(Usage.model_validate(reply_usage))):
        assert searched.web_search_requests == 3 and searched.total == 0  # searches are no tokens
        assert PriceTable().cost_usd("claude-sonnet-4-5", searched) == pytest.approx(0.03)
    searched = TokenUsage.model_validate(reply_usage)
    assert (searched + searched).web_search_requests == 6
    assert ModelUsage.of("claude-sonnet-4-5", searched, 0.03).web_search_requests == 3  # modelUsage's webSearchRequests
    cheaper = PriceTable().with_overrides({"claude-sonnet-4": {"input": 3, "output": 15, "cacheWrite": 3.75,
                                                               "cacheRead": 0.3, "webSearch": 5}})
    assert cheaper.cost_usd("claude-sonnet-4-5", searched) == pytest.approx(0.015)
    assert PriceTable().cost_usd("my-local", searched) == 0.0  # an unknown model costs nothing, as ever


def test_a_results_usage_reports_the_searches():
    from covey.events.result import wire_usage

    wired = wire_usage(TokenUsage(input_tokens=5, web_search_requests=2).model_dump())
    assert wired["server_tool_use"] == {"web_search_requests": 2, "web_fetch_requests": 0}
    assert wired["input_tokens"] == 5
