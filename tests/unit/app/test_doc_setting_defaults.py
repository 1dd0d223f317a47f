"""A hand-written table that gives a setting's default gives the code's default, so no value is stated twice
with two numbers (the generated settings table in docs/reference.md is the one place that lists them all)."""

from __future__ import annotations

import re
from pathlib import Path

from shared.app.capabilities import catalogue
from shared.app.docs import ROOT, doc_files
from shared.core.settings import Settings, SettingsSection

_ROW = re.compile(r"^\| `(FIREBREAK_[A-Z0-9_]+)` \| ([^|]*) \|")
_BLOCK = re.compile(r"<!-- (\w+):begin -->.*?<!-- \1:end -->", re.DOTALL)
_NONE = {"", "empty", "none", "\N{EN DASH}", "-"}


def _code_defaults() -> dict[str, object]:
    defaults: dict[str, object] = {}
    sections: tuple[type[SettingsSection], ...] = (Settings, *catalogue().settings_sections)
    for section in sections:
        for name, key in section.env_names().items():
            info = section.model_fields[name]
            defaults[key] = info.get_default(call_default_factory=True, validated_data={})
    return defaults


def _same(stated: str, value: object) -> bool:
    text = stated.strip().strip("`").strip()
    if value is None or value == "" or value == [] or str(value) == "PydanticUndefined":
        return text.lower() in _NONE
    if isinstance(value, bool):
        return text.lower() == str(value).lower()
    if isinstance(value, int | float):
        try:
            return float(text.replace(",", "")) == float(value)
        except ValueError:
            return False
    return text == str(value)


def _hand_written_rows() -> list[tuple[Path, str, str]]:
    """(file, setting, stated default) of each row under a `| setting | default | ...` header, outside
    generated blocks, in the README, docs/ and the capability READMEs."""
    files = [*doc_files(), *sorted((ROOT / "shared").glob("*/README.md"))]
    rows: list[tuple[Path, str, str]] = []
    for path in files:
        header: list[str] = []
        for line in _BLOCK.sub("", path.read_text()).splitlines():
            if not line.startswith("|"):
                header = []
            elif not header:
                header = [cell.strip().lower() for cell in line.strip("|").split("|")]
            elif len(header) > 1 and header[1] == "default" and (match := _ROW.match(line)):
                rows.append((path, match.group(1), match.group(2)))
    return rows


def test_the_scan_finds_hand_written_setting_tables() -> None:
    assert any(path.name == "README.md" and "investigations" in path.parts for path, _s, _d in _hand_written_rows())


def test_every_hand_written_default_is_the_codes() -> None:
    defaults = _code_defaults()
    wrong = [
        f"{path.relative_to(ROOT)}: {setting} says {stated.strip()!r}, the code {defaults.get(setting)!r}"
        for path, setting, stated in _hand_written_rows()
        if setting in defaults and not _same(stated, defaults[setting])  # host-only names have no section
    ]
    assert wrong == []
