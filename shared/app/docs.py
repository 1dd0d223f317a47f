"""Generated documentation blocks (tools, containers, settings and each capability's own section, from the
catalogue), rewritten in place in the README and the files of docs/ wherever their markers are."""

from __future__ import annotations

from pathlib import Path

from pydantic_core import PydanticUndefined

from shared.core.settings import Settings, SettingsSection
from shared.tools.capability import Catalogue

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def doc_files() -> list[Path]:
    """The files that may hold generated blocks: the README and every Markdown file of docs/."""
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


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
    sections: tuple[type[SettingsSection], ...] = (Settings, *Settings.platform_sections, *cat.settings_sections)
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
            # Links written from shared/<capability>/ point at the repository root two folders up; docs/ is one.
            text = c.readme.read_text().strip().replace("](../../docs/", "](").replace("](../../", "](../")
            body += ["", below_level(text, 3)]
        parts.append("\n".join(body))
    return "\n\n".join(parts)


def below_level(markdown: str, level: int) -> str:
    """`markdown` with its headings moved down so the highest is level + 1 (a capability's README under its
    `### name`); lines inside code fences are not headings."""
    lines = markdown.split("\n")
    fence = False
    found: list[tuple[int, int]] = []
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            hashes = len(line) - len(line.lstrip("#"))
            if line[hashes : hashes + 1] == " ":
                found.append((i, hashes))
    if not found:
        return markdown
    shift = max(0, level + 1 - min(h for _, h in found))
    for i, hashes in found:
        lines[i] = "#" * min(6, hashes + shift) + lines[i][hashes:]
    return "\n".join(lines)


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
