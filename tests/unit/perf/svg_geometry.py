"""Where an SVG's texts and lines sit, read back from the SVG, to test that nothing covers a text.

Widths use the charts' own estimate (svg.text_width: 7 px a character at 11 px, scaled with the font size).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from shared.perf.analysis.svg import text_width

SVG = "{http://www.w3.org/2000/svg}"


def texts(svg: str) -> list[tuple[float, float, float, float, str]]:
    """(left, right, top, bottom, text) of every text element, from its x, y, font size and length."""
    out = []
    for t in ET.fromstring(svg).iter(f"{SVG}text"):
        size = float(t.get("font-size", "11"))
        text = "".join(t.itertext())
        x, y = float(t.get("x", "0")), float(t.get("y", "0"))
        out.append((x, x + text_width(text, size), y - size, y, text))
    return out


def lines(svg: str) -> list[tuple[float, float, float]]:
    return [
        (float(line.get("x1", "0")), float(line.get("y1", "0")), float(line.get("y2", "0")))
        for line in ET.fromstring(svg).iter(f"{SVG}line")
    ]


def crossings(svg: str) -> list[str]:
    """Texts crossed by a threshold line, and pairs of texts that overlap."""
    placed, bad = texts(svg), []
    for left, right, top, bottom, text in placed:
        for x, y1, y2 in lines(svg):
            if left - 1 <= x <= right + 1 and min(y1, y2) < bottom and max(y1, y2) > top:
                bad.append(f"line at x={x:.1f} crosses {text!r}")
    bad += [
        f"{a[4]!r} overlaps {b[4]!r}"
        for i, a in enumerate(placed)
        for b in placed[i + 1 :]
        if a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]
    ]
    return bad
