"""Two pictures for reports, as self-contained SVG (no scripts, no external fonts, deterministic output).

- `offenders_chart`: horizontal bars of the top offenders per metric, coloured by severity, with the
  P0/P1/P2 thresholds drawn as lines, so "how far over" is visible at a glance. Labels name the subject
  (functions with their request, `Fn (GET /path)`, cut in the middle when long); a value label moves right
  of any threshold line that would cross it, and threshold labels too close to each other share one label.
- `flame_graph`: a flame graph from collapsed stacks (`a;b;c <self>`), root at the bottom, widths
  proportional to inclusive cost, a `<title>` tooltip on every frame; frames under MIN_PX are merged away,
  rows past MAX_ROWS are not drawn (the caption says so); the layout is iterative, so depth is no limit.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any
from xml.sax.saxutils import escape

WIDTH = 1200
FONT = 'font-family="Verdana,Arial,sans-serif" font-size="11"'
SEVERITY_COLOURS = {"P0": "#d62728", "P1": "#ff7f0e", "P2": "#e6c229", None: "#9e9e9e"}
MIN_PX = 0.5
ROW = 16
MAX_ROWS = 1024


# Characters XML 1.0 forbids (and lone surrogates, which no encoder writes): a name with one would make
# the whole picture unreadable, so each becomes U+FFFD.
_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape_text(s: str) -> str:
    """`s` safe as SVG text or a double-quoted attribute value (shared with diff_svg)."""
    return escape(_ILLEGAL.sub("\ufffd", s), {'"': "&quot;"})


def text_width(text: str, font_px: float = 11) -> float:
    """The width a text takes at `font_px`, estimated generously (7 px a character at 11 px)."""
    return len(text) * 7.0 * font_px / 11


def fit_subject(label: str, pixels: float) -> str:
    """A ranked subject cut to `pixels`, keeping what tells it apart: its trailing "(GET /path)" and the end of
    its function name (`::method`); the middle of the name gives way first."""
    if text_width(label) <= pixels:
        return label
    cut = label.rfind(" (")
    room = int(pixels / 7) - (len(label) - cut) - 2
    if cut <= 0 or not label.endswith(")") or room < 8:
        return fit_label(label, pixels)
    head, suffix = label[:cut], label[cut:]
    tail = head[-(room - 4) :]
    for sep in ("\\", "::"):
        i = head.rfind(sep)
        if i > 0 and len(head) - i <= room - 4:
            tail = head[i:]
            break
    return f"{head[: room - len(tail)]}..{tail}{suffix}"


def clear_of(x: float, width: float, lines: list[float]) -> float:
    """`x`, moved right past every line (ascending x) that would cross a text `width` wide starting there."""
    for line in lines:
        if x - 2 <= line <= x + width + 2:
            x = line + 3
    return x


def _threshold_labels(levels: dict[str, Any], xs: dict[str, float], top_y: int) -> list[str]:
    """P2/P1/P0 labels above their lines; a label that would overlap the one before joins it ("P2 1,000 / P1 3,000")."""
    groups: list[tuple[float, list[str]]] = []  # (x, levels)
    for level in ("P2", "P1", "P0"):
        if groups:
            x0, members = groups[-1]
            joined = " / ".join(f"{m} {levels[m]:,}" for m in members)
            if xs[level] + 2 < x0 + text_width(joined, 9) + 6:
                members.append(level)
                continue
        groups.append((xs[level] + 2, [level]))
    out = []
    for x, members in groups:
        spans = "".join(
            f'<tspan fill="{SEVERITY_COLOURS[m]}">{" / " if i else ""}{m} {levels[m]:,}</tspan>'
            for i, m in enumerate(members)
        )
        width = text_width(" / ".join(f"{m} {levels[m]:,}" for m in members), 9)
        out.append(f'<text x="{min(x, WIDTH - 2 - width):.1f}" y="{top_y - 2}" font-size="9">{spans}</text>')
    return out


def fit_label(label: str, pixels: float) -> str:
    """`label` cut to what fits `pixels` at about 7 px a character, ".." marking the cut; "" if under 3 fit."""
    chars = int(pixels / 7)
    if chars < 3:
        return ""
    return label if len(label) <= chars else label[: chars - 2] + ".."


def offenders_chart(aggregates: dict[str, Any], thresholds: dict[str, Any], metrics: list[str]) -> str:
    """One panel per metric with ranked items; empty metrics are left out (an SVG saying so if all are)."""
    panels = [(m, aggregates.get(m) or []) for m in metrics if aggregates.get(m)]
    label_w, bar_w, pad = 430, 640, 10
    height = 30 + sum(24 + ROW * len(items) + pad for _, items in panels) + (20 if not panels else 0)
    out = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" {FONT}>'
        ),
        '<rect width="100%" height="100%" fill="#ffffff"/>',
        (
            '<text x="10" y="18" font-size="14" font-weight="bold">'
            "Top offenders (bar = measured, lines = P2 / P1 / P0 thresholds)</text>"
        ),
    ]
    y = 30
    if not panels:
        out.append(
            f'<text x="10" y="{y + 12}">'
            "Nothing to rank: the snapshot has no endpoints, queries or functions with timings.</text>"
        )
    for metric, items in panels:
        levels = thresholds[metric]
        top = max([i["value_ms"] for i in items] + [levels["P0"]]) * 1.05
        scale = bar_w / top if top > 0 else 0.0
        out.append(f'<text x="10" y="{y + 14}" font-weight="bold">{escape_text(metric)}</text>')
        y += 20
        xs = {level: label_w + levels[level] * scale for level in ("P2", "P1", "P0")}
        fit = fit_subject if metric.startswith("span_") else fit_label  # a statement reads from its start
        lines = sorted(xs.values())
        top_y = y
        for item in items:
            w = max(1.0, item["value_ms"] * scale)
            colour = SEVERITY_COLOURS.get(item["severity"], "#9e9e9e")
            out.append(f'<text x="10" y="{y + 12}">{escape_text(fit(str(item["subject"]), label_w - 10))}</text>')
            out.append(
                f'<rect x="{label_w}" y="{y + 2}" width="{w:.1f}" height="{ROW - 4}" fill="{colour}">'
                f"<title>{escape_text(str(item['subject']))}: "
                f"{item['value_ms']:,.1f} ms ({item['severity'] or 'below P2'})"
                "</title></rect>"
            )
            value = f"{item['value_ms']:,.1f} ms"
            # Beside its bar, but never under a threshold line: a line through the digits misreads them.
            out.append(
                f'<text x="{clear_of(label_w + w + 4, text_width(value), lines):.1f}" y="{y + 12}">{value}</text>'
            )
            y += ROW
        for level, dash in (("P2", "2,2"), ("P1", "4,2"), ("P0", "")):
            dashes = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(
                f'<line x1="{xs[level]:.1f}" y1="{top_y}" x2="{xs[level]:.1f}" y2="{y}" '
                f'stroke="{SEVERITY_COLOURS[level]}" stroke-width="1"{dashes}/>'
            )
        out.extend(_threshold_labels(levels, xs, top_y))
        y += pad
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _colour(name: str) -> str:
    h = hashlib.sha256(name.encode()).digest()
    return f"rgb({205 + h[0] % 50},{80 + h[1] % 130},{h[2] % 60})"  # the classic warm flame palette


def flame_graph(collapsed_stacks: str, title: str, unit: str = "ns") -> str:
    root: dict[str, Any] = {"children": {}, "total": 0.0}
    for line in collapsed_stacks.splitlines():
        stack, _, value = line.rpartition(" ")
        try:
            cost = float(value)
        except ValueError:
            continue
        node = root
        node["total"] += cost
        for frame in stack.split(";"):
            node = node["children"].setdefault(frame, {"children": {}, "total": 0.0})
            node["total"] += cost
    total = root["total"]
    frames: list[tuple[int, float, float, str, float]] = []  # depth, x, width, name, cost
    scale = (WIDTH - 20) / total if total > 0 else 0.0

    # Iterative, children in name order (a call chain thousands of frames deep is no recursion limit);
    # rows past MAX_ROWS are not drawn, and the picture says so.
    # Each stack entry: a node's children still to place, the row they go in, and the next x.
    todo: list[tuple[list[str], dict[str, Any], int, float]] = [(sorted(root["children"], reverse=True), root, 0, 10.0)]
    cut = False
    while todo:
        names, node, level, x = todo[-1]
        if not names:
            todo.pop()
            continue
        name = names.pop()
        child = node["children"][name]
        w = child["total"] * scale
        todo[-1] = (names, node, level, x + w)
        if w >= MIN_PX:
            if level >= MAX_ROWS:
                cut = True
                continue
            frames.append((level, x, w, name, child["total"]))
            todo.append((sorted(child["children"], reverse=True), child, level + 1, x))
    depth = max((f[0] for f in frames), default=0) + 1
    height = 50 + depth * ROW
    out = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" {FONT}>'
        ),
        '<rect width="100%" height="100%" fill="#fdf8ef"/>',
        f'<text x="10" y="18" font-size="14" font-weight="bold">{escape_text(title)}</text>',
        (
            f'<text x="10" y="34">Flame graph: width = inclusive {"wall time" if unit == "ns" else unit}; '
            f"total {total / 1e6 if unit == 'ns' else total:,.1f} {'ms' if unit == 'ns' else unit}. "
            "Hover a frame for its numbers."
            f"{f' Frames deeper than {MAX_ROWS} are not drawn.' if cut else ''}</text>"
        ),
    ]
    for d, x, w, name, cost in frames:
        y = height - 10 - (d + 1) * ROW
        share = 100.0 * cost / total if total else 0.0
        amount = f"{cost / 1e6:,.3f} ms" if unit == "ns" else f"{cost:,.0f} {unit}"
        out.append(
            f"<g><title>{escape_text(name)}: {amount} ({share:.1f}%)</title>"
            f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{ROW - 1}" fill="{_colour(name)}" rx="1"/>'
            f'<text x="{x + 3:.2f}" y="{y + 11}">{escape_text(fit_label(name, w - 6))}</text></g>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
