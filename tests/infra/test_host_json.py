"""host.json is documented: docs/reference.md's table lists every setting with the value the file holds (so the
table cannot go stale), and the settings the issue names are there."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from tests.infra.bicep import ROOT

HOST = json.loads((ROOT / "host.json").read_text())


def _leaves(node: dict[str, Any], path: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in node.items():
        here = f"{path}/{key}" if path else key
        if isinstance(value, dict):
            yield from _leaves(value, here)
        else:
            yield here, value


def _documented() -> dict[str, Any]:
    readme = (ROOT / "docs" / "reference.md").read_text()
    table = readme.split("<!-- host.json table -->", 1)[1].split("<!-- /host.json table -->", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| `(.+?)` \| (.+) \|$", table, flags=re.MULTILINE)
    assert rows, "README has no host.json table"
    for _, _, why in rows:
        assert len(why.strip()) > 10
    return {path: json.loads(value) for path, value, _ in rows}


def test_every_host_json_setting_is_documented_with_its_value() -> None:
    documented = _documented()
    actual = dict(_leaves(HOST))
    assert set(actual) == set(documented), {
        "undocumented": sorted(set(actual) - set(documented)),
        "gone": sorted(set(documented) - set(actual)),
    }
    wrong = {path: (documented[path], value) for path, value in actual.items() if documented[path] != value}
    assert not wrong, f"README value != host.json value: {wrong}"


def test_the_settings_a_deployment_depends_on() -> None:
    leaves = dict(_leaves(HOST))
    assert leaves["extensions/durableTask/hubName"] == "%FIREBREAK_TASK_HUB%"
    assert leaves["extensionBundle/id"] == "Microsoft.Azure.Functions.ExtensionBundle"
    assert leaves["extensionBundle/version"].startswith("[4.")
    assert leaves["extensions/http/routePrefix"] == "api"
    hours, minutes, seconds = (int(p) for p in leaves["functionTimeout"].split(":"))
    assert 0 < hours * 3600 + minutes * 60 + seconds <= 30 * 60
    assert leaves["extensions/durableTask/tracing/traceInputsAndOutputs"] is False
    # Durable's own spans follow the request that started the run (W3C trace context); inputs stay out of them.
    assert leaves["extensions/durableTask/tracing/distributedTracingEnabled"] is True
    assert leaves["extensions/durableTask/tracing/version"] == "V2"
    for key in ("extensions/durableTask/maxConcurrentActivityFunctions",):
        assert isinstance(leaves[key], int)
        assert leaves[key] > 0
    # Flex Consumption limits HTTP concurrency per instance itself (function-app.bicep perInstanceConcurrency);
    # host.json's http limits would only mislead (tests/infra/test_function_app.py checks they are gone).
    assert "extensions/http/maxConcurrentRequests" not in leaves
    assert leaves["logging/logLevel/Host.Results"] == "Information"
