"""The comparison pictures: baseline-vs-candidate bars and Gregg's differential flame graph.

The flame-graph inputs are the real SPX fixtures' collapsed stacks; the candidate is the same text with
chosen lines' counts scaled, so every frame's expected colour follows from the two texts alone.
"""

from __future__ import annotations

import gzip
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from shared.perf.analysis import diff_svg
from shared.perf.analysis.diff_svg import diff_bars, differential_flame_graph
from shared.perf.analysis.svg import MAX_ROWS, MIN_PX, ROW, SEVERITY_COLOURS, WIDTH
from shared.perf.parsers.spx.export import DEEPER, MORE, collapsed
from shared.perf.parsers.spx.trace import aggregate_trace
from tests.unit.perf.svg_geometry import crossings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "spx"
TINY = "spx-full-20261122_030646-vm-31166-1804289383"
KEYS = [
    "spx-full-20261122_030646-vm-31168-1804289383",
    "spx-full-20261122_030648-vm-31172-1804289383",
    "spx-full-20261122_030651-vm-31182-1804289383",  # a thousand call paths
    "spx-full-20261122_031020-vm-32586-1804289383",
]
NS = "{http://www.w3.org/2000/svg}"
HOSTILE = ["<script>alert(1)</script>", "a & b", "say \"hi\" 'there'", "x" * 10_000]


def stacks(key: str) -> str:
    meta = json.loads((FIXTURES / f"{key}.json").read_text())
    with gzip.open(FIXTURES / f"{key}.txt.gz", "rb") as f:
        return collapsed(aggregate_trace(f, meta["enabled_metrics"], meta["called_function_count"]))


def costs(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in text.splitlines():
        path, _, value = line.rpartition(" ")
        out[path] = out.get(path, 0.0) + float(value)
    return out


def text_of(paths: dict[str, float]) -> str:
    return "".join(f"{p} {v}\n" for p, v in sorted(paths.items()))


def rgb(fill: str) -> tuple[int, int, int]:
    match = re.fullmatch(r"rgb\((\d+),(\d+),(\d+)\)", fill)
    assert match, fill
    r, g, b = (int(v) for v in match.groups())
    return r, g, b


def hue(fill: str) -> str:
    r, g, b = rgb(fill)
    if (r, g, b) == (255, 255, 255):
        return "white"
    if r == 255 and g == b < 255:
        return "red"
    if b == 255 and r == g < 255:
        return "blue"
    return f"other {fill}"


def frames(svg: str) -> dict[str, dict[str, str]]:
    """Drawn frames by their `a;b;c` path, rebuilt from geometry: a frame's parent is the frame one row
    lower whose span holds it."""
    drawn = []
    for g in ET.fromstring(svg).iter(f"{NS}g"):
        rect, title = g.find(f"{NS}rect"), g.find(f"{NS}title")
        assert rect is not None
        assert title is not None
        x, w, y = float(rect.get("x", "nan")), float(rect.get("width", "nan")), float(rect.get("y", "nan"))
        drawn.append((-y, x, w, (title.text or "").split(": baseline ")[0], rect.get("fill", ""), title.text or ""))
    out: dict[str, dict[str, str]] = {}
    placed: list[tuple[float, float, float, str]] = []  # -y, x, x + w, path (0.02: the SVG rounds to 0.01 px)
    for up, x, w, name, fill, tip in sorted(drawn):  # lowest row first: parents before children
        below = [p for (u, a, b, p) in placed if u == up - ROW and a - 0.02 <= x and x + w <= b + 0.02]
        path = f"{below[0]};{name}" if below else name
        placed.append((up, x, x + w, path))
        out[path] = {"fill": fill, "title": tip, "width": str(w)}
    return out


def leaves(paths: dict[str, float]) -> list[str]:
    """Paths below the root with no children, costliest first."""
    return sorted(
        (p for p in paths if ";" in p and not any(q.startswith(p + ";") for q in paths)), key=lambda p: -paths[p]
    )


@pytest.mark.parametrize("key", KEYS)
def test_each_frame_is_coloured_by_the_change_in_its_self_time(key: str) -> None:
    base = costs(stacks(key))
    grow, shrink = leaves(base)[:2]
    cand = {**base, grow: base[grow] * 2, shrink: base[shrink] / 2}
    picture = frames(differential_flame_graph(text_of(base), text_of(cand), key))
    assert hue(picture[grow]["fill"]) == "red"
    assert hue(picture[shrink]["fill"]) == "blue"
    assert "(+100.0%)" in picture[grow]["title"]
    assert "(-50.0%)" in picture[shrink]["title"]
    for path, frame in picture.items():
        before, after = base.get(path, 0.0), cand.get(path, 0.0)
        assert hue(frame["fill"]) == ("red" if after > before else "blue" if after < before else "white"), path
    assert len(picture) > 3  # the real tree, not just the two scaled frames


def test_the_largest_change_is_the_deepest_colour_and_smaller_ones_paler() -> None:
    base = costs(stacks(KEYS[3]))
    big, small = leaves(base)[:2]
    cand = {**base, big: base[big] * 3, small: base[small] * 1.1}
    picture = frames(differential_flame_graph(text_of(base), text_of(cand), "t"))
    assert rgb(picture[big]["fill"])[1] < rgb(picture[small]["fill"])[1] < 255


@pytest.mark.parametrize("key", [TINY, *KEYS])
def test_identical_profiles_are_all_neutral_and_widths_follow_the_candidate(key: str) -> None:
    text = stacks(key)
    svg = differential_flame_graph(text, text, key)
    picture = frames(svg)
    assert picture
    assert {hue(f["fill"]) for f in picture.values()} == {"white"}
    roots = sum(float(f["width"]) for p, f in picture.items() if ";" not in p)
    assert roots == pytest.approx(WIDTH - 20, abs=5 * MIN_PX)  # only sub-MIN_PX roots missing
    assert "+0.000 ms (+0.0%)" in svg


def test_a_frame_gone_from_the_candidate_is_not_drawn_but_its_time_is_told() -> None:
    base = costs(stacks(TINY))
    gone = leaves(base)[0]
    cand = {p: v for p, v in base.items() if p != gone}
    svg = differential_flame_graph(text_of(base), text_of(cand), "gone")
    assert gone not in frames(svg)
    assert f"{base[gone] / 1e6:,.3f} ms of baseline time is in frames the candidate lacks" in svg
    # Gregg's diff1.svg: the baseline's widths, still red for growth and blue for shrinkage.
    before = frames(differential_flame_graph(text_of(base), text_of(cand), "gone", widths="baseline"))
    assert hue(before[gone]["fill"]) == "blue"
    with pytest.raises(ValueError, match="widths"):
        differential_flame_graph("a 1\n", "a 1\n", "t", widths="both")  # type: ignore[arg-type]


def test_normalize_compares_shapes_not_totals() -> None:
    cand = costs(stacks(KEYS[1]))
    base = {p: v * 2 for p, v in cand.items()}
    plain = frames(differential_flame_graph(text_of(base), text_of(cand), "t"))
    assert {hue(f["fill"]) for p, f in plain.items() if cand.get(p, 0) > 0} == {"blue"}
    normalized = frames(differential_flame_graph(text_of(base), text_of(cand), "t", normalize=True))
    assert {hue(f["fill"]) for f in normalized.values()} == {"white"}


def test_same_inputs_same_bytes_whatever_the_line_order() -> None:
    base, cand = stacks(KEYS[3]), stacks(KEYS[1])
    first = differential_flame_graph(base, cand, "t")
    shuffled = "\n".join(reversed(base.splitlines()))
    assert differential_flame_graph(shuffled, cand, "t") == first
    assert differential_flame_graph(base, cand, "t") == first


def test_malformed_lines_are_skipped_and_counted() -> None:
    junk = "no count\na;b -5\na;b nan\na;b inf\na;b 1e999\n 12\n\na;b\x00c 3\na;b 4\n"
    svg = differential_flame_graph(junk, "a;b 4\na;b\x00c 1\n", "t")
    picture = frames(svg)
    assert set(picture) == {"a", "a;b", "a;b\ufffdc"}
    assert "6 malformed baseline line(s) skipped" in svg
    assert hue(picture["a;b\ufffdc"]["fill"]) == "blue"
    ET.fromstring(differential_flame_graph("", "", "empty"))


def test_hostile_names_and_titles_are_escaped() -> None:
    lines = "".join(f"main;{name} {i + 1}\n" for i, name in enumerate(HOSTILE))
    svg = differential_flame_graph(lines, lines.replace(" 1\n", " 9\n"), "<script>&\"'")
    assert "<script>" not in svg
    root = ET.fromstring(svg)
    titles = [t.text or "" for t in root.iter(f"{NS}title")]
    for name in HOSTILE:
        assert any(t.startswith(f"{name}: baseline ") for t in titles)
    texts = [t.text or "" for t in root.iter(f"{NS}text")]
    assert "<script>&\"'" in texts
    assert max(len(t) for t in texts[3:]) < 200  # frame labels are fitted to their frames


def test_a_hostile_unit_is_escaped_too() -> None:
    svg = differential_flame_graph("a;b 1\n", "a;b 2\n", "t", unit="<u&>")
    texts = [t.text or "" for t in ET.fromstring(svg).iter(f"{NS}text")]
    assert any("inclusive <u&>" in t for t in texts)
    assert "<u&>" not in svg


def test_inputs_past_the_caps_are_bounded_and_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diff_svg, "MAX_INPUT_LINES", 50)
    monkeypatch.setattr(diff_svg, "MAX_NODES", 40)
    monkeypatch.setattr(diff_svg, "MAX_FRAMES", 10)
    monkeypatch.setattr(diff_svg, "MAX_INPUT_BYTES", 2_000)
    many = "".join(f"main;f{i:03};g 100\n" for i in range(200))
    svg = differential_flame_graph(many, many, "caps")
    picture = frames(svg)
    assert len(picture) == 10
    assert MORE in picture
    assert "baseline cut at 2,000 bytes" in svg
    rows = "".join(f"main;f{i:03} 1\n" for i in range(60))
    assert "cut at 50 lines" in differential_flame_graph(rows, rows, "lines")
    assert "only the lowest 10 frames drawn" in svg


def test_a_deep_stack_ends_in_one_deeper_frame() -> None:
    deep = ";".join(["f"] * 3000) + " 10\n"
    svg = differential_flame_graph(deep, deep, "deep")
    rows = {g.find(f"{NS}rect").get("y") for g in ET.fromstring(svg).iter(f"{NS}g")}  # type: ignore[union-attr]
    assert len(rows) == MAX_ROWS
    assert f"{DEEPER}: baseline" in svg


def change(**kw: object) -> dict[str, object]:
    return {
        "label": "GET /orders",
        "metric": "endpoint_p95_ms",
        "unit": "ms",
        "direction": "slower",
        "severity": "P1",
        "baseline": 100.0,
        "candidate": 250.0,
        "thresholds": {"P0": 400.0, "P1": 200.0, "P2": 150.0},
    } | kw


def groups(svg: str) -> list[ET.Element]:
    return [g for g in ET.fromstring(svg).iter(f"{NS}g") if g.get("class") == "change"]


def bar(group: ET.Element, kind: str) -> ET.Element:
    found = [r for r in group.iter(f"{NS}rect") if r.get("class") == kind]
    assert len(found) == 1
    return found[0]


def test_bars_one_pair_per_change_on_a_shared_scale_coloured_by_severity() -> None:
    changes = [
        change(severity="P0", candidate=500.0),
        change(severity="P1"),
        change(severity="P2", candidate=160.0),
        change(severity=None, direction="faster", candidate=50.0),
    ]
    svg = diff_bars(changes, "run A vs run B")
    drawn = groups(svg)
    assert len(drawn) == len(changes)
    for c, g in zip(changes, drawn, strict=True):
        assert len(list(g.iter(f"{NS}rect"))) == 2
        base, cand = float(bar(g, "baseline").get("width", "0")), float(bar(g, "candidate").get("width", "0"))
        assert cand / base == pytest.approx(float(c["candidate"]) / float(c["baseline"]), rel=0.01)  # type: ignore[arg-type]
        if c["severity"]:
            assert bar(g, "candidate").get("fill") == SEVERITY_COLOURS[c["severity"]]  # type: ignore[index]
    assert bar(drawn[3], "candidate").get("fill") not in SEVERITY_COLOURS.values()
    assert "+150.0 ms (+150.0%)" in svg
    assert "-50.0 ms (-50.0%)" in svg


def test_threshold_ticks_where_given_and_on_the_same_scale() -> None:
    svg = diff_bars([change(), change(thresholds={"P1": 300.0}), change(thresholds=None)], "t")
    full, partial, none = groups(svg)

    def ticks(g: ET.Element) -> dict[str, float]:
        return {
            (line.get("class") or "").split()[1]: float(line.get("x1", "nan"))
            for line in g.iter(f"{NS}line")
            if (line.get("class") or "").startswith("threshold")
        }

    assert set(ticks(full)) == {"P0", "P1", "P2"}
    assert set(ticks(partial)) == {"P1"}
    assert ticks(none) == {}
    x0 = float(bar(full, "candidate").get("x", "nan"))
    cand_w = float(bar(full, "candidate").get("width", "nan"))
    assert (ticks(full)["P1"] - x0) / cand_w == pytest.approx(200.0 / 250.0, rel=0.01)
    far = groups(diff_bars([change(thresholds={"P0": 1e9, "P1": 200.0})], "t"))[0]
    assert set(ticks(far)) == {"P1"}
    assert "off scale: P0 1,000,000,000.0 ms" in (far.findtext(f"{NS}title") or "")


def test_new_gone_zero_negative_and_huge_values_and_units() -> None:
    changes = [
        change(direction="new", baseline=None, severity="P2", unit="count", candidate=42.0),
        change(direction="gone", candidate=None, severity=None, unit="rows", baseline=7.0),
        change(baseline=0.0, candidate=0.0, unit="ratio"),
        change(baseline=-5.0, candidate=3.0),
        change(baseline=1.0, candidate=1e300, thresholds={"P0": 1e12}),
    ]
    svg = diff_bars(changes, "edge cases")
    new, gone, zero, negative, huge = groups(svg)
    assert float(bar(new, "baseline").get("width", "nan")) == 0
    assert float(bar(gone, "candidate").get("width", "nan")) == 0
    for g in (zero, negative, huge):
        for kind in ("baseline", "candidate"):
            assert 0 <= float(bar(g, kind).get("width", "nan")) <= 600
    assert "candidate 42 count" in svg
    assert "baseline 7 rows" in svg
    assert "0.000x" in svg
    assert "1e+300 ms" in svg


def test_limit_note_and_empty_input() -> None:
    svg = diff_bars([change(label=f"endpoint {i}") for i in range(25)], "t", limit=20)
    assert len(groups(svg)) == 20
    assert "+5 more" in svg
    assert "more" not in diff_bars([change()], "t")
    empty = diff_bars([], "nothing changed")
    assert groups(empty) == []
    assert "No changes" in (ET.fromstring(empty).find(f"{NS}text[@class='note']").text or "")  # type: ignore[union-attr]


def test_bar_labels_are_escaped_and_fitted() -> None:
    svg = diff_bars([change(label=name, metric=name) for name in HOSTILE], HOSTILE[0])
    assert "<script>" not in svg
    assert len(svg) < 20_000  # the 10k-character label is cut in its text and its tooltip
    root = ET.fromstring(svg)
    titles = [t.text or "" for t in root.iter(f"{NS}title")]
    for name in HOSTILE[:3]:
        assert any(t.startswith(f"{name}: ") for t in titles)


def test_no_threshold_tick_crosses_a_value_label() -> None:
    # Bars that end just short of a tick: each value label would start right before it.
    charts = [
        diff_bars([change(baseline=140.0, candidate=145.0, severity=None, direction="slower")], "t"),
        diff_bars([change(baseline=190.0, candidate=196.0)], "t"),
        diff_bars([change(baseline=100.0, candidate=390.0, severity="P1")], "t"),
    ]
    assert [bad for svg in charts for bad in crossings(svg)] == []
