"""Index an app the way the Python worker does: import function_app.py, read each function's raw bindings."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class FunctionInfo:
    """One indexed function: what the worker would send the host (name + binding JSON) and the callable."""

    name: str
    bindings: tuple[dict[str, Any], ...]
    user_function: Callable[..., Any]

    @property
    def trigger(self) -> dict[str, Any]:
        return next(b for b in self.bindings if b["type"].endswith("Trigger"))

    def bindings_of(self, binding_type: str) -> list[dict[str, Any]]:
        return [b for b in self.bindings if b["type"] == binding_type]


def load_app(app_dir: Path, script: str = "function_app.py", module_name: str = "function_app") -> Any:
    """Import the app module from `app_dir` and return its FunctionApp instance (the worker's search)."""
    import azure.functions as func

    app_dir = app_dir.resolve()
    if str(app_dir) not in sys.path:
        sys.path.insert(0, str(app_dir))
    spec = importlib.util.spec_from_file_location(module_name, app_dir / script)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"{app_dir / script} not found")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    apps = [v for v in vars(module).values() if isinstance(v, func.FunctionRegister)]
    if len(apps) != 1:
        raise ValueError(f"{script} must define exactly one FunctionApp, found {len(apps)}")
    return apps[0]


def index_functions(app: Any) -> list[FunctionInfo]:
    """The functions with their bindings as JSON dicts, exactly as `get_raw_bindings()` reports them."""
    infos = []
    for fn in app.get_functions():
        bindings = tuple(json.loads(raw) for raw in fn.get_raw_bindings())
        infos.append(FunctionInfo(fn.get_function_name(), bindings, fn.get_user_function()))
    return infos


def read_host_json(app_dir: Path) -> dict[str, Any]:
    path = app_dir / "host.json"
    return json.loads(path.read_text()) if path.exists() else {}


_SETTING_REF = re.compile(r"%([^%]+)%")


class UnresolvedSetting(ValueError):
    """host.json names an app setting (`%NAME%`) that is not set: the Functions host refuses to start."""

    def __init__(self, name: str, where: str) -> None:
        self.name, self.where = name, where
        super().__init__(
            f"host.json {where}: '%{name}%' does not resolve to a value: set the app setting {name} "
            "(local.settings.json Values locally, the Function App's settings on Azure)"
        )


def resolve_setting_refs(value: Any, env: Mapping[str, str], where: str = "") -> Any:
    """A copy of `value` (host.json or part of it) with every `%NAME%` replaced by the app setting NAME.

    As the Functions host does, a reference to a setting that is unset (or empty, which no setting
    holding a name or number can be) stops the start-up with the setting's name, instead of a
    silent default such as a shared task hub.
    """
    if isinstance(value, dict):
        return {k: resolve_setting_refs(v, env, f"{where}.{k}" if where else k) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_setting_refs(v, env, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, str):

        def setting(match: re.Match[str]) -> str:
            resolved = env.get(match.group(1))
            if not resolved:
                raise UnresolvedSetting(match.group(1), where or "value")
            return resolved

        return _SETTING_REF.sub(setting, value)
    return value


def route_prefix(host_json: dict[str, Any]) -> str:
    prefix: str = host_json.get("extensions", {}).get("http", {}).get("routePrefix", "api")
    return prefix.strip("/")
