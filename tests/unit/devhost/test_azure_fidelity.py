"""host.json as the Functions host reads it: every %SETTING% must resolve (the host will not start
otherwise), and the logging configuration keeps successful requests visible in Application Insights."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from devhost.index import UnresolvedSetting, read_host_json, resolve_setting_refs
from devhost.stack import Stack

ROOT = Path(__file__).resolve().parents[3]
LEVELS = ["Trace", "Debug", "Information", "Warning", "Error", "Critical", "None"]


def effective_level(log_levels: dict[str, str], category: str) -> str:
    """The Functions host's rule: the longest configured prefix of the category wins, else `default`."""
    matches = [k for k in log_levels if k != "default" and (category == k or category.startswith(k + "."))]
    return log_levels[max(matches, key=len)] if matches else log_levels.get("default", "Information")


def test_every_reference_resolves_or_names_the_setting() -> None:
    doc = {"a": "%X%", "b": ["pre-%Y%-%X%", 3], "c": {"d": "plain"}}
    assert resolve_setting_refs(doc, {"X": "1", "Y": "2"}) == {"a": "1", "b": ["pre-2-1", 3], "c": {"d": "plain"}}
    with pytest.raises(UnresolvedSetting) as caught:
        resolve_setting_refs(doc, {"X": "1"})
    assert caught.value.name == "Y"
    assert caught.value.where == "b[0]"
    assert "'%Y%' does not resolve" in str(caught.value)


def test_the_settings_host_json_needs_are_in_every_local_settings_source() -> None:
    refs = set(re.findall(r"%([^%]+)%", (ROOT / "host.json").read_text()))
    assert "FIREBREAK_TASK_HUB" in refs
    example = json.loads((ROOT / "local.settings.example.json").read_text())["Values"]
    written = Stack.at(ROOT / ".local").app_settings()  # what `make run` writes to local.settings.json
    for name in refs:
        assert example.get(name), name
        assert written.get(name), name
    resolve_setting_refs(read_host_json(ROOT), written)


def test_successful_requests_reach_application_insights() -> None:
    logging = read_host_json(ROOT)["logging"]
    levels = logging["logLevel"]
    # Host.Results carries the request telemetry (one per invocation, success or not).
    for category in ("Host.Results", "Function", "Function.mcp"):
        assert LEVELS.index(effective_level(levels, category)) <= LEVELS.index("Information"), category
    sampling = logging["applicationInsights"]["samplingSettings"]
    # Requests are never sampled away; other telemetry is sampled adaptively up to the stated rate.
    assert "Request" in sampling["excludedTypes"].split(";")
    assert sampling["maxTelemetryItemsPerSecond"] > 0


def test_effective_level_rule() -> None:
    levels = {"default": "Warning", "Host": "Error", "Host.Results": "Information"}
    assert effective_level(levels, "Host.Results") == "Information"
    assert effective_level(levels, "Host.Aggregator") == "Error"
    assert effective_level(levels, "Function.x") == "Warning"
