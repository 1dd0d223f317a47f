"""An activity's declared models are enforced at both ends, and a mismatch names the field (never its value)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from shared.tools.capability import ActiveRun, ActivityPayloadInvalid, ActivitySpec
from shared.tools.deps import Deps


class Ask(BaseModel):
    n: int = Field(ge=1)
    token_hint: str


class Answer(BaseModel):
    total: int
    names: list[str]


async def _code(run: ActiveRun, ask: Ask, deps: Deps) -> Answer:
    return Answer(total=ask.n, names=[])


SPEC = ActivitySpec(_code, input=Ask, output=Answer)


def test_a_model_goes_out_as_json_and_comes_back_as_the_same_model() -> None:
    sent = SPEC.send("act", Ask(n=2, token_hint="x"))
    wire = json.loads(json.dumps(sent))  # what Durable carries
    assert SPEC.receive("act", wire) == Ask(n=2, token_hint="x")
    recorded = json.loads(json.dumps(SPEC.reply("act", Answer(total=3, names=["a"]))))
    assert SPEC.result("act", recorded) == Answer(total=3, names=["a"])


def test_a_missing_input_field_fails_naming_it_and_not_a_key_error() -> None:
    with pytest.raises(
        ActivityPayloadInvalid, match=r"activity act's input does not fit Ask: token_hint: Field required"
    ):
        SPEC.receive("act", {"n": 1})


def test_a_wrong_input_value_is_named_by_its_field_and_the_value_is_left_out() -> None:
    with pytest.raises(ActivityPayloadInvalid) as caught:
        SPEC.receive("act", {"n": 0, "token_hint": "s3cr3t-value"})
    assert "n: Input should be greater than or equal to 1" in str(caught.value)
    assert "s3cr3t-value" not in str(caught.value)


def test_an_unknown_input_field_is_refused_when_the_model_forbids_extras() -> None:
    class Strict(BaseModel, extra="forbid"):
        n: int

    async def strict(run: ActiveRun, ask: Strict, deps: Deps) -> Answer:
        return Answer(total=ask.n, names=[])

    spec = ActivitySpec(strict, input=Strict, output=Answer)
    with pytest.raises(ActivityPayloadInvalid, match=r"stray: Extra inputs are not permitted"):
        spec.receive("act", {"n": 1, "stray": True})


def test_an_output_that_does_not_fit_fails_the_activity_naming_the_field() -> None:
    with pytest.raises(
        ActivityPayloadInvalid, match=r"activity act's output does not fit Answer: names: Field required"
    ):
        SPEC.reply("act", {"total": 1})
    # A model built without validation is validated too: model_construct skips it.
    with pytest.raises(ActivityPayloadInvalid, match=r"names\.0: Input should be a valid string"):
        SPEC.reply("act", Answer.model_construct(total=1, names=[object()]))  # type: ignore[list-item]


def test_a_recorded_result_that_does_not_fit_fails_on_the_orchestrator_side() -> None:
    # On replay the result comes from the history as JSON: an older shape is caught before the code reads it.
    with pytest.raises(ActivityPayloadInvalid, match=r"activity act's result does not fit Answer: total: Input should"):
        SPEC.result("act", {"total": "many", "names": []})


def test_the_orchestrator_must_pass_the_declared_model() -> None:
    with pytest.raises(ActivityPayloadInvalid, match="activity act takes a Ask, got a dict"):
        SPEC.send("act", {"n": 1, "token_hint": "x"})  # type: ignore[arg-type]
    with pytest.raises(ActivityPayloadInvalid, match="activity act takes a Ask, got a Answer"):
        SPEC.send("act", Answer(total=1, names=[]))


async def _nothing(run: ActiveRun, _: None, deps: Deps) -> None:
    return None


def test_an_activity_without_models_takes_and_returns_nothing() -> None:
    bare = ActivitySpec(_nothing)
    assert bare.send("bare", None) is None
    assert bare.receive("bare", None) is None
    assert bare.reply("bare", None) is None
    with pytest.raises(ActivityPayloadInvalid, match="activity bare takes no input, got a Ask"):
        bare.send("bare", Ask(n=1, token_hint="x"))
    with pytest.raises(ActivityPayloadInvalid, match="activity bare's input must be empty, got a dict"):
        bare.receive("bare", {"n": 1})
