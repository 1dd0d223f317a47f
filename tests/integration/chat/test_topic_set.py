"""The topic set (tests/fixtures/chat/topic_set.json: 355 messages, 185 on-topic task requests in many phrasings
and 170 off-topic requests, many with task-like verbs) through the assistant's rule path, per split.

Each split was written and labelled before it was measured: `tune` and `holdout` before the guardrail was
tuned for issue #27 (tuning looked at `tune`), `holdout2`..`holdout4` each after the fixes the previous one
showed, measured once before changing anything for it (figures in shared/chat/README.md). A message counts
as refused when the answer is the spec's refusal (mode "refusal"); the help text is not a refusal. The goal
(issue #27): refusal recall >= 0.9 with at most one on-topic message refused. Figures print with pytest -s.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from shared.chat.assistant import REFUSAL, AssistantReply, respond
from shared.identity.models import Principal
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext

SPLITS = ("tune", "holdout", "holdout2", "holdout3", "holdout4", "blind")
_SETS = Path(__file__).resolve().parents[2] / "fixtures" / "chat"
# topic_blind.json: 80 messages written by a session that never read the guardrail, its rules or the topic set.
SETS = (_SETS / "topic_set.json", _SETS / "topic_blind.json")


def messages() -> list[dict[str, str]]:
    data: list[dict[str, str]] = [m for path in SETS for m in json.loads(path.read_text())["messages"]]
    return data


def refused(reply: AssistantReply) -> bool:
    return reply.mode == "refusal" or reply.text == REFUSAL


def figures(results: list[tuple[dict[str, str], bool]]) -> dict[str, Any]:
    off = [r for m, r in results if m["expected"] == "refuse"]
    on = [(m, r) for m, r in results if m["expected"] == "allow"]
    return {
        "off_topic": len(off),
        "on_topic": len(on),
        "recall": round(sum(off) / len(off), 3),
        "on_topic_refused": sum(1 for _, r in on if r),
        "missed": [m["message"] for m, r in results if m["expected"] == "refuse" and not r],
        "wrongly_refused": [m["message"] for m, r in on if r],
    }


def test_the_set_has_both_labels_in_both_splits() -> None:
    found = messages()
    assert len(found) >= 200
    for split in SPLITS:
        labels = {m["label"] for m in found if m["split"] == split}
        assert labels == {"on_topic", "off_topic"}


async def test_rule_path_refuses_off_topic_and_serves_task_requests(deps: Deps) -> None:
    principal = Principal(workspace_id=f"ws-topic-{uuid.uuid4().hex[:8]}", user_id="alice", source="dev")
    me = ToolContext(principal, deps, "corr-topic", transport="rest")
    results = [(m, refused(await respond(me, [], m["message"], llm=None))) for m in messages()]
    got = {split: figures([(m, r) for m, r in results if m["split"] == split]) for split in SPLITS}
    print("\ntopic set, rule path:", json.dumps(got, indent=1))
    for split in SPLITS:
        assert got[split]["recall"] >= 0.9, got[split]
        assert got[split]["on_topic_refused"] <= 1, got[split]
