"""Generated README sections: tools, containers, settings and each capability's own section, from the catalogue."""

from __future__ import annotations

from pathlib import Path

from pydantic_core import PydanticUndefined

from shared.core.settings import Settings, SettingsSection
from shared.tools.capability import Catalogue

README = Path(__file__).resolve().parents[2] / "README.md"
# What a table cell shows for "none": an en dash, spelled by name so it is not mistaken for a hyphen.
_NONE = "\N{EN DASH}"
_BLOCKS = ("tools", "containers", "settings", "capabilities")


def tools_table(cat: Catalogue) -> str:
    rows = ["| tool | capability | hints | what it does |", "|---|---|---|---|"]
    for t in cat.registry:
        a = t.annotations
        flags = (
            ("read-only", a.read_only),
            ("destructive", a.destructive),
            ("idempotent", a.idempotent),
            ("open-world", a.open_world),
        )
        hints = ", ".join(h for h, on in flags if on) or "writes"
        rows.append(f"| `{t.name}` | {t.capability} | {hints} | {t.description.splitlines()[0]} |")
    return "\n".join(rows)


def containers_table(cat: Catalogue) -> str:
    owner = {spec.name: c.name for c in cat.capabilities for spec in c.containers}
    rows = ["| container | capability | partition key | not indexed | TTL | holds |", "|---|---|---|---|---|---|"]
    for c in cat.containers.values():
        excluded = ", ".join(f"`{p}`" for p in c.excluded_paths) or _NONE
        ttl = _NONE if c.default_ttl is None else ("per item" if c.default_ttl == -1 else f"{c.default_ttl} s")
        rows.append(f"| `{c.name}` | {owner[c.name]} | `{c.partition_key}` | {excluded} | {ttl} | {c.purpose} |")
    return "\n".join(rows)


def _default(section: type[SettingsSection], name: str) -> str:
    info = section.model_fields[name]
    value = info.default_factory() if info.default_factory is not None else info.default  # type: ignore[call-arg]  # pydantic types the factory as taking validated data
    if value is PydanticUndefined or value is None or value == []:
        return _NONE
    return f"`{str(value).lower() if isinstance(value, bool) else value}`"


def settings_table(cat: Catalogue) -> str:
    """Every setting the app reads: the platform's, then each capability's section."""
    rows = ["| setting | capability | default | meaning |", "|---|---|---|---|"]
    owner = {c.settings: c.name for c in cat.capabilities if c.settings is not None}
    sections: tuple[type[SettingsSection], ...] = (Settings, *cat.settings_sections)
    for section in sections:
        for name, key in section.env_names().items():
            alias = section.env_aliases.get(name)
            names = f"`{key}`" + (f" (or `{alias}`)" if alias else "")
            description = (section.model_fields[name].description or "").replace("|", "\\|")
            rows.append(f"| {names} | {owner.get(section, 'platform')} | {_default(section, name)} | {description} |")
    return "\n".join(rows)


def capabilities_sections(cat: Catalogue) -> str:
    """Each capability's summary, parts and its own README section (its folder's README.md)."""
    parts: list[str] = []
    for c in cat.capabilities:
        tools = ", ".join(f"`{t.name}`" for t in cat.registry if t.capability == c.name) or _NONE
        body = [
            f"### {c.name}",
            "",
            c.summary,
            "",
            (
                f"Tools: {tools}. Containers: {', '.join(f'`{s.name}`' for s in c.containers) or _NONE}. "
                f"Orchestrations: {', '.join(f'`{o.name}`' for o in c.orchestrations) or _NONE}. "
                f"Checks: {', '.join(f'`{k.name}`' for k in c.checks) or _NONE}."
            ),
        ]
        if c.readme is not None and c.readme.exists():
            body += ["", c.readme.read_text().strip()]
        parts.append("\n".join(body))
    return "\n\n".join(parts)


def render_readme(text: str, cat: Catalogue) -> str:
    """`text` with every generated block (between `<!-- name:begin -->` and `<!-- name:end -->`) rewritten."""
    bodies = {
        "tools": tools_table(cat),
        "containers": containers_table(cat),
        "settings": settings_table(cat),
        "capabilities": capabilities_sections(cat),
    }
    for key in _BLOCKS:
        begin, end = f"<!-- {key}:begin -->", f"<!-- {key}:end -->"
        if begin not in text:
            continue
        head, _, rest = text.partition(begin)
        _, _, tail = rest.partition(end)
        text = f"{head}{begin}\n{bodies[key]}\n{end}{tail}"
    return text
