"""Two pictures comparing a baseline perf run with a candidate run, as self-contained SVG like svg.py's.

How to read them:

- `diff_bars`: one group per change, in the order given. The upper bar is the baseline (light grey), the
  lower one the candidate, both on the group's own scale (so a group shows proportion, not absolute size
  against other groups). The candidate bar is coloured by severity (P0 red, P1 orange, P2 yellow; green
  for a faster/gone change below every grade, grey otherwise). Vertical ticks mark the candidate values
  where P2 (dotted), P1 (dashed) and P0 (solid) start; a threshold far off the group's scale is written
  next to the metric instead of drawn. Values carry their unit; "absent" means the run did not have it.
- `differential_flame_graph`: Brendan Gregg's differential flame graph (difffolded.pl + flamegraph.pl,
  2014). The two collapsed-stack texts are merged into one tree; a frame's width is its inclusive time in
  the candidate (or in the baseline with `widths="baseline"`, Gregg's "diff1.svg": the before picture
  coloured by what happened next). The colour is the change in the frame's *self* time, as Gregg's
  flamegraph.pl does: red = grew, blue = shrank, white = unchanged, the depth of the colour proportional
  to the change over the largest change of any frame (so run-to-run noise stays near white). Frames the
  drawn side lacks have no width: the subtitle says how much time of the other side is in them. With
  `normalize=True` (difffolded.pl -n) the baseline is scaled to the candidate's total before comparing.
  Every frame's tooltip gives baseline, candidate and delta (unit and percent) of its inclusive time.

Bounded like svg.py: each input is read up to MAX_INPUT_BYTES and MAX_INPUT_LINES, a stack keeps
MAX_ROWS frames (the rest is one `[deeper frames]` frame), the tree keeps MAX_NODES frames (later stacks
that need more go to one `[more stacks]` root frame), frames narrower than MIN_PX are not drawn and at
most MAX_FRAMES are (lowest rows first). Malformed lines (no count, a negative or non-finite count) are
skipped and counted in the subtitle. Same inputs, same bytes.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from shared.perf.analysis.svg import (
    FONT,
    MAX_ROWS,
    MIN_PX,
    ROW,
    SEVERITY_COLOURS,
    WIDTH,
    clear_of,
    escape_text,
    fit_label,
    text_width,
)
from shared.perf.parsers.spx.export import DEEPER, MAX_COLLAPSED_BYTES, MORE

MAX_BARS = 200
MAX_LABEL = 500  # characters of a label (or metric name) kept for its tooltip
MAX_INPUT_BYTES = 2 * MAX_COLLAPSED_BYTES
MAX_INPUT_LINES = 200_000
MAX_NODES = 250_000
MAX_FRAMES = 20_000
_LEVELS = (("P2", "2,2"), ("P1", "4,2"), ("P0", ""))
_GRADES = ("P0", "P1", "P2")
_OFF_SCALE = 3.0  # thresholds beyond this many times the group's largest value are written, not drawn
_BASELINE_FILL = "#c7c7c7"
_FASTER_FILL = "#2ca02c"
_SUFFIX = {"ms": " ms", "ratio": "x", "count": " count", "rows": " rows"}


def _header(height: int, background: str) -> list[str]:
    return [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" {FONT}>'
        ),
        f'<rect width="100%" height="100%" fill="{background}"/>',
    ]


def _number(value: float, unit: str) -> str:
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 1e15:
        return f"{value:.4g}"
    if unit == "ratio":
        return f"{value:,.3f}"
    if unit in ("count", "rows") and value == int(value):
        return f"{value:,.0f}"
    return f"{value:,.1f}" if unit == "ms" else f"{value:,.2f}"


def _amount(value: float | None, unit: str) -> str:
    if value is None:
        return "absent"
    return _number(value, unit) + _SUFFIX.get(unit, f" {unit}")


def _change(baseline: float | None, candidate: float | None, unit: str) -> str:
    if baseline is None or candidate is None:
        return "new" if baseline is None else "gone"
    delta = candidate - baseline
    sign = "+" if delta >= 0 else "-"
    text = f"{sign}{_amount(abs(delta), unit)}"
    if baseline != 0 and math.isfinite(delta):
        pct = delta / abs(baseline) * 100
        text += f" ({pct:+,.1f}%)" if abs(pct) < 1e4 else f" ({pct:+,.0f}%)" if abs(pct) < 1e7 else f" ({pct:+.3g}%)"
    return text


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def _bar_group(change: dict[str, Any], y: int, label_w: int, bar_w: int) -> list[str]:
    """One change: label and metric on the left, baseline and candidate bars with threshold ticks."""
    unit = str(change.get("unit", ""))
    label, metric = str(change.get("label", "")), str(change.get("metric", ""))[:MAX_LABEL]
    base, cand = _finite(change.get("baseline")), _finite(change.get("candidate"))
    severity, direction = change.get("severity"), str(change.get("direction", ""))
    levels = {
        k: v
        for k in ("P2", "P1", "P0")
        if (v := _finite((change.get("thresholds") or {}).get(k))) is not None and v >= 0
    }
    biggest = max([abs(v) for v in (base, cand) if v is not None] + [0.0])
    top = max([biggest] + [v for v in levels.values() if v <= _OFF_SCALE * biggest or biggest == 0]) * 1.05
    scale = bar_w / top if top > 0 else 0.0
    if severity in _GRADES:
        fill = SEVERITY_COLOURS[severity]
    else:
        fill = _FASTER_FILL if direction in ("faster", "gone") else SEVERITY_COLOURS[None]
    tip = escape_text(label[:MAX_LABEL] + (".." if len(label) > MAX_LABEL else ""))
    grade = severity if severity in _GRADES else "below P2"
    ticks, off_scale, tick_xs = [], [], []
    for level, dash in _LEVELS:
        if level not in levels:
            continue
        x = label_w + levels[level] * scale
        if x > label_w + bar_w:
            off_scale.append(f"{level} {_amount(levels[level], unit)}")
            continue
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        tick_xs.append(x)
        ticks.append(
            f'<line class="threshold {level}" x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 30}" '
            f'stroke="{SEVERITY_COLOURS[level]}" stroke-width="1.5"{dashes}>'
            f"<title>{level} starts at {escape_text(_amount(levels[level], unit))}</title></line>"
        )
    off = f" · off scale: {', '.join(off_scale)}" if off_scale else ""
    about = f"{metric} · {direction}{off}"
    out = [
        '<g class="change">',
        f"<title>{tip}: {escape_text(f'{metric} · {direction} · {_change(base, cand, unit)} ({grade}){off}')}</title>",
        f'<text x="10" y="{y + 12}">{escape_text(fit_label(label, label_w - 10))}</text>',
        (  # 9 px type: about 1.25 times the characters fit_label counts for 11 px
            f'<text x="10" y="{y + 26}" font-size="9" fill="#555555">'
            f"{escape_text(fit_label(about, (label_w - 10) * 1.25))}</text>"
        ),
    ]
    for i, (kind, value, colour) in enumerate((("baseline", base, _BASELINE_FILL), ("candidate", cand, fill))):
        w = 0.0 if value is None else max(1.0, value * scale)
        row_y = y + 2 + i * 14
        out.append(f'<rect class="{kind}" x="{label_w}" y="{row_y}" width="{w:.1f}" height="12" fill="{colour}"/>')
        words = f"{kind} {_amount(value, unit)}"
        if kind == "candidate":
            words += f", {_change(base, cand, unit)}" + (f", {severity}" if severity in _GRADES else "")
        # Beside its bar and past any tick that would cross it; a long text moves over its bar, not off the page.
        x = min(clear_of(label_w + w + 4, text_width(words, 10), sorted(tick_xs)), WIDTH - 5 - text_width(words, 10))
        out.append(f'<text x="{x:.1f}" y="{row_y + 10}" font-size="10">{escape_text(words)}</text>')
    out += ticks
    out.append("</g>")
    return out


def diff_bars(changes: list[dict[str, Any]], title: str, limit: int = 20) -> str:
    """Baseline vs candidate bars for the first `limit` changes (at most MAX_BARS), a "+N more" note after."""
    shown = changes[: max(0, min(limit, MAX_BARS))]
    more = len(changes) - len(shown)
    label_w, bar_w, group = 360, 520, 36
    height = 44 + group * len(shown) + (20 if more or not shown else 0)
    out = [
        *_header(height, "#ffffff"),
        f'<text x="10" y="18" font-size="14" font-weight="bold">{escape_text(fit_label(title, WIDTH - 20))}</text>',
        (
            '<text x="10" y="34">Upper bar = baseline, lower bar = candidate (colour = severity); '
            "ticks = where P2 / P1 / P0 start. Each group has its own scale.</text>"
        ),
    ]
    y = 42
    for change in shown:
        out += _bar_group(change, y, label_w, bar_w)
        y += group
    if not shown:
        out.append(f'<text class="note" x="10" y="{y + 12}">No changes: the baseline and the candidate agree.</text>')
    elif more:
        out.append(f'<text class="note" x="10" y="{y + 12}">+{more:,} more change(s) not drawn.</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


class _Tree:
    """Both profiles merged: node 0 is the (undrawn) root, node n has `parent[n] < n`, `name[n]` and the
    self time of its path in each profile, `own[0]` (baseline) and `own[1]` (candidate)."""

    def __init__(self) -> None:
        self.parent, self.name = [-1], [""]
        self.own: tuple[list[float], list[float]] = ([0.0], [0.0])
        self.index: dict[tuple[int, str], int] = {}
        self.notes: list[str] = []

    def _node(self, parent: int, name: str) -> int:
        n = self.index.get((parent, name))
        if n is None:
            n = self.index[parent, name] = len(self.parent)
            self.parent.append(parent)
            self.name.append(name)
            self.own[0].append(0.0)
            self.own[1].append(0.0)
        return n

    def _leaf(self, frames: list[str]) -> int:
        n, i = 0, 0
        while i < len(frames) and (n, frames[i]) in self.index:
            n, i = self.index[n, frames[i]], i + 1
        if i < len(frames) and len(self.parent) + len(frames) - i > MAX_NODES:
            return self._node(0, MORE)  # one node past the cap at most: the same MORE every time
        for name in frames[i:]:
            n = self._node(n, name)
        return n

    def add(self, side: int, text: str, which: str) -> None:
        """Merge one collapsed-stack text; malformed lines are skipped, and the notes say what was cut."""
        if len(text) > MAX_INPUT_BYTES:
            text = text[:MAX_INPUT_BYTES].rpartition("\n")[0]
            self.notes.append(f"{which} cut at {MAX_INPUT_BYTES:,} bytes")
        skipped, start = 0, 0
        for count in range(MAX_INPUT_LINES + 1):
            if start >= len(text):
                break
            if count == MAX_INPUT_LINES:
                self.notes.append(f"{which} cut at {MAX_INPUT_LINES:,} lines")
                break
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
            line, start = text[start:end].rstrip("\r"), end + 1
            if not line.strip():
                continue  # blank lines are no stack, not a malformed one
            stack, _, value = line.rpartition(" ")
            try:
                cost = float(value)
            except ValueError:
                cost = math.nan
            if not stack or not math.isfinite(cost) or cost < 0:
                skipped += 1
                continue
            frames = stack.split(";", MAX_ROWS)  # never more than MAX_ROWS + 1 pieces, however long the line
            if len(frames) > MAX_ROWS:
                frames = [*frames[: MAX_ROWS - 1], DEEPER]
            self.own[side][self._leaf(frames)] += cost
        if skipped:
            self.notes.append(f"{skipped:,} malformed {which} line(s) skipped")

    def inclusive(self, side: int) -> list[float]:
        total = list(self.own[side])
        for n in range(len(total) - 1, 0, -1):  # children come after their parents
            total[self.parent[n]] += total[n]
        return total


def _time(value: float, unit: str, signed: bool = False) -> str:
    sign = ("+" if value >= 0 else "-") if signed else ""
    value = abs(value) if signed else value
    return f"{sign}{value / 1e6:,.3f} ms" if unit == "ns" else f"{sign}{value:,.0f} {unit}"


def _percent(delta: float, base: float) -> str:
    if base > 0:
        return f"{delta / base * 100:+,.1f}%"
    return "new" if delta > 0 else "unchanged"


def _heat(delta: float, biggest: float) -> str:
    """Gregg's differential hues, in proportion: white at no change, full red/blue at the largest change."""
    if biggest <= 0 or delta == 0:
        return "rgb(255,255,255)"
    c = 255 - max(1, round(215 * min(1.0, abs(delta) / biggest)))  # any change is off white, if barely
    return f"rgb(255,{c},{c})" if delta > 0 else f"rgb({c},{c},255)"


def _layout(tree: _Tree, widths: list[float], scale: float) -> tuple[list[tuple[int, float, float, int]], bool]:
    """(row, x, width, node) of every frame at least MIN_PX wide, lowest rows first, at most MAX_FRAMES."""
    children: list[list[int]] = [[] for _ in tree.parent]
    for n in range(1, len(tree.parent)):
        children[tree.parent[n]].append(n)
    frames = []
    todo: list[tuple[int, int, float]] = [(0, 0, 10.0)]  # a node, its children's row, their first x
    while todo:
        node, row, x = todo.pop()
        for c in sorted(children[node], key=tree.name.__getitem__):
            w = widths[c] * scale
            if w >= MIN_PX:
                frames.append((row, x, w, c))
                todo.append((c, row + 1, x))
            x += w
    frames.sort()
    return frames[:MAX_FRAMES], len(frames) > MAX_FRAMES


def differential_flame_graph(
    baseline: str,
    candidate: str,
    title: str,
    unit: str = "ns",
    *,
    widths: Literal["candidate", "baseline"] = "candidate",
    normalize: bool = False,
) -> str:
    """Gregg's differential flame graph of two collapsed-stack texts (module docstring: how to read it)."""
    if widths not in ("candidate", "baseline"):
        raise ValueError(f"widths must be 'candidate' or 'baseline', not {widths!r}")
    tree = _Tree()
    tree.add(0, baseline, "baseline")
    tree.add(1, candidate, "candidate")
    base_inc, cand_inc = tree.inclusive(0), tree.inclusive(1)
    if normalize and base_inc[0] > 0 and cand_inc[0] > 0:
        factor = cand_inc[0] / base_inc[0]
        tree.own[0][:] = [v * factor for v in tree.own[0]]
        base_inc = tree.inclusive(0)
    drawn, other = (1, 0) if widths == "candidate" else (0, 1)
    incs = (base_inc, cand_inc)
    # A change within float error (normalizing scales the baseline) is no change: such frames stay white.
    deltas = [0.0 if abs(c - b) <= 1e-9 * max(b, c) else c - b for b, c in zip(tree.own[0], tree.own[1], strict=True)]
    biggest = max((abs(d) for d in deltas), default=0.0)
    total = incs[drawn][0]
    frames, capped = _layout(tree, incs[drawn], (WIDTH - 20) / total if total > 0 else 0.0)
    unseen = sum(tree.own[other][n] for n in range(1, len(deltas)) if incs[drawn][n] == 0)
    depth = max((f[0] for f in frames), default=0) + 1
    notes = [*tree.notes, *([f"only the lowest {MAX_FRAMES:,} frames drawn"] if capped else [])]
    top = 76 if notes else 60
    height = top + depth * ROW + 10
    what = "wall time" if unit == "ns" else unit
    names = ("baseline", "candidate")
    scale_note = f"full colour = {_time(biggest, unit)}" if biggest > 0 else "no frame's self time changed"
    legend = (
        f"Differential flame graph: width = {names[drawn]} inclusive {what}; colour = change in a frame's self "
        f"{what}: red grew, blue shrank, white unchanged ({scale_note}). Hover a frame for its numbers."
    )
    totals = (
        f"Baseline {_time(base_inc[0], unit)}{' (normalized)' if normalize else ''}, candidate "
        f"{_time(cand_inc[0], unit)}: {_time(cand_inc[0] - base_inc[0], unit, True)} "
        f"({_percent(cand_inc[0] - base_inc[0], base_inc[0])}). {_time(unseen, unit)} of {names[other]} time is in "
        f"frames the {names[drawn]} lacks (not drawn)."
    )
    out = [
        *_header(height, "#f2f2f2"),
        f'<text x="10" y="18" font-size="14" font-weight="bold">{escape_text(fit_label(title, WIDTH - 20))}</text>',
        f'<text x="10" y="34">{escape_text(legend)}</text>',
        f'<text x="10" y="50">{escape_text(totals)}</text>',
    ]
    if notes:
        out.append(f'<text x="10" y="66" fill="#a00000">Input bounded: {escape_text("; ".join(notes))}.</text>')
    for row, x, w, n in frames:
        y = height - 10 - (row + 1) * ROW
        b, c = base_inc[n], cand_inc[n]
        numbers = (
            f"baseline {_time(b, unit)}, candidate {_time(c, unit)}, delta {_time(c - b, unit, True)} "
            f"({_percent(c - b, b)}); self {_time(deltas[n], unit, True)}"
        )
        out.append(
            f"<g><title>{escape_text(tree.name[n])}: {escape_text(numbers)}</title>"
            f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{ROW - 1}" fill="{_heat(deltas[n], biggest)}" '
            f'stroke="#d0d0d0" stroke-width="0.5" rx="1"/>'
            f'<text x="{x + 3:.2f}" y="{y + 11}">{escape_text(fit_label(tree.name[n], w - 6))}</text></g>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
