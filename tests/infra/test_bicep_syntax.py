"""Every .bicep file parses (pycep-parser, as the bicep CLI would refuse a syntax error), every module and
loaded file it names exists, and the parameter files give main.bicep only parameters it declares, with
values its decorators allow."""

from __future__ import annotations

import json
import re

import pytest
from lark.exceptions import LarkError

from tests.infra import bicep

FILES = bicep.bicep_files()


def test_infra_has_the_main_template_and_a_module_per_concern() -> None:
    names = {p.stem for p in bicep.MODULES.glob("*.bicep")}
    assert bicep.MAIN.exists()
    assert {
        "function-app",
        "storage",
        "cosmos",
        "monitoring",
        "keyvault",
        "identity",
        "durable-task-scheduler",
    } <= names


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(bicep.INFRA)) for p in FILES])
def test_each_bicep_file_parses(path) -> None:
    doc = bicep.parse(path)
    assert doc["globals"] is not None
    assert doc.get("resources") or doc.get("modules"), f"{path.name} declares nothing"


def test_a_syntax_error_is_caught() -> None:
    """The parser is strict enough to matter: an unclosed object and a stray token both fail."""
    good = "param name string\nresource r 'Microsoft.Storage/storageAccounts@2023-05-01' = {\n  name: name\n}\n"
    assert bicep.parse_text(good)["resources"]["r"]["type"] == "Microsoft.Storage/storageAccounts"
    for broken in (good.replace("}\n", ""), good.replace("name: name", "name name"), good + "output\n"):
        with pytest.raises((LarkError, ValueError)):
            bicep.parse_text(broken)


def test_modules_and_loaded_files_exist() -> None:
    main = bicep.parse(bicep.MAIN)
    for name, mod in main["modules"].items():
        assert (bicep.INFRA / mod["detail"]["path"]).exists(), f"module {name}: {mod['detail']['path']} is missing"
    for path in bicep.bicep_files():
        for loaded in re.findall(r"load(?:Json|Text)Content\('([^']+)'\)", path.read_text()):
            target = path.parent / loaded
            assert target.exists(), f"{path.name} loads {loaded}, which is missing"
            if loaded.endswith(".json"):
                json.loads(target.read_text())


def test_module_calls_pass_only_declared_parameters_and_every_required_one() -> None:
    main = bicep.parse(bicep.MAIN)
    for name, mod in main["modules"].items():
        target = bicep.parse(bicep.INFRA / mod["detail"]["path"])
        declared = target["parameters"]
        passed = set(bicep.module_params(mod))
        assert passed <= set(declared), f"module {name} passes undeclared {sorted(passed - set(declared))}"
        required = {p for p, spec in declared.items() if spec["default"] is None}
        assert required <= passed, f"module {name} misses required {sorted(required - passed)}"


def _allowed(spec: dict) -> list | None:
    return next((d["argument"] for d in spec["decorators"] if d["type"] == "allowed"), None)


@pytest.mark.parametrize("path", [*bicep.PARAM_FILES, bicep.AZD_PARAMS], ids=lambda p: p.name)
def test_parameter_files_match_main(path) -> None:
    declared = bicep.parse(bicep.MAIN)["parameters"]
    given = bicep.param_file(path)
    assert set(given) <= set(declared), f"{path.name} sets undeclared {sorted(set(given) - set(declared))}"
    required = {p for p, spec in declared.items() if spec["default"] is None}
    assert required <= set(given), f"{path.name} misses required {sorted(required - set(given))}"
    for name, entry in given.items():
        allowed = _allowed(declared[name])
        value = entry["value"]
        if allowed is not None and not (isinstance(value, str) and value.startswith("${")):
            assert value in allowed, f"{path.name}: {name}={value!r} is not one of {allowed}"


def test_dev_and_prod_parameter_files_exist() -> None:
    assert {p.name for p in bicep.PARAM_FILES} >= {"dev.parameters.json", "prod.parameters.json"}
