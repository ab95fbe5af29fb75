"""The LLM resource from the environment: what each variable sets, and the key kept secret."""

from __future__ import annotations

import pytest

from bigaction_assets.defs.llm_resource import LLMResource, llm_from_env

VARIABLES = (
    "BIGACTION_LLM_BASE_URL", "BIGACTION_LLM_MODEL", "OPENAI_API_KEY", "BIGACTION_LLM_PRICES",
    "BIGACTION_LLM_CONCURRENCY", "BIGACTION_LLM_MAX_TOKENS", "BIGACTION_LLM_TEMPERATURE",
    "BIGACTION_LLM_TIMEOUT_SECONDS", "BIGACTION_LLM_BUDGET_TOKENS", "BIGACTION_LLM_BUDGET_USD",
)  # fmt: skip


@pytest.fixture
def env(monkeypatch):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_no_model_means_unconfigured(env):
    llm = llm_from_env()
    assert not llm.configured
    with pytest.raises(ValueError, match="no model configured"):
        llm.config()


def test_every_variable_reaches_the_config_and_the_key_stays_out_of_sight(env):
    env.setenv("BIGACTION_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    env.setenv("BIGACTION_LLM_MODEL", "m")
    env.setenv("OPENAI_API_KEY", "sk-secret-value")
    env.setenv("BIGACTION_LLM_PRICES", '{"m": [1.5, 6]}')
    env.setenv("BIGACTION_LLM_CONCURRENCY", "3")
    env.setenv("BIGACTION_LLM_MAX_TOKENS", "64")
    env.setenv("BIGACTION_LLM_TEMPERATURE", "0.2")
    env.setenv("BIGACTION_LLM_TIMEOUT_SECONDS", "9")
    env.setenv("BIGACTION_LLM_BUDGET_TOKENS", "1000")
    env.setenv("BIGACTION_LLM_BUDGET_USD", "2.5")
    llm = llm_from_env()
    config = llm.process_config_and_initialize().config()
    assert config.client.base_url == "http://127.0.0.1:9/v1" and config.client.model == "m"
    assert config.client.api_key == "sk-secret-value"
    assert (config.client.max_tokens, config.client.temperature) == (64, 0.2)
    assert config.client.timeout_seconds == 9 and config.concurrency == 3
    assert (config.budget_tokens, config.budget_usd) == (1000, 2.5)
    assert config.prices.price("m").cost(1_000_000, 1_000_000) == 7.5
    assert "sk-secret-value" not in repr(llm) and "sk-secret-value" not in repr(config)


def test_openai_itself_needs_a_key(env):
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        LLMResource(model="gpt-4o-mini").config()


@pytest.mark.parametrize(
    ("name", "value"),
    [("BIGACTION_LLM_CONCURRENCY", "eight"), ("BIGACTION_LLM_PRICES", '{"m": 3}')],
)
def test_a_malformed_variable_is_named_in_the_error(env, name, value):
    env.setenv(name, value)
    with pytest.raises(ValueError, match=name):
        llm_from_env()
