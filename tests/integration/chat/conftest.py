"""The chat assistant's model for these tests: the OpenAI-compatible test server on 127.0.0.1 and a real client.

`llm` scripts the server; `client` is the real `LlmClient` (openai SDK) pointed at it with `LLM_KEY`, which the
tests look for in answers and errors to show the key never leaks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from pydantic import SecretStr

from shared.core.llm import LlmClient, LlmConfig
from tests.support.fake_llm import FakeLlm, fake_llm

LLM_KEY = "sk-chat-test-5f1c0e"


@pytest.fixture
def llm() -> Iterator[FakeLlm]:
    with fake_llm() as server:
        yield server


@pytest.fixture
async def client(llm: FakeLlm) -> AsyncIterator[LlmClient]:
    config = LlmConfig(
        kind="compatible", endpoint=llm.base_url, model="gpt-test", api_key=SecretStr(LLM_KEY), max_retries=0
    )
    c = LlmClient.create(config)
    yield c
    await c.aclose()
