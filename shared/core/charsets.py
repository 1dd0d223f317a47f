"""Which charsets an outside server may name for its text, and decoding in bounded pieces.

A `charset=` parameter is chosen by whoever answers. Python's codec registry holds much more than text
encodings: `punycode` decodes in quadratic time (256 KiB cost 11 s), `utf-7` and the `*_codec` transforms
(zlib, base64) are no text a page is served in. Only the encodings below are decoded, each one linear in
its input (measured on hostile bytes: invalid lead bytes, lone surrogates, escape storms); any other name,
known to Python or not, is decoded as UTF-8 with U+FFFD for what is not UTF-8, which is what a browser
does with a label it does not know.

`decode` works through the input in `PIECE_BYTES` pieces with one incremental decoder: a codec holds the
GIL for a whole call, and a charmap codec on bytes it cannot map costs about a microsecond a byte, so one
call on 8 MiB would stall every other thread (the event loop included) for seconds.
"""

from __future__ import annotations

import codecs

DEFAULT = "utf-8"
PIECE_BYTES = 16 * 1024

# Canonical codec names (`codecs.lookup(name).name`): the WHATWG Encoding Standard's encodings that Python
# has (web pages are served in these), plus UTF-32 and the BOM-stripping UTF-8.
ALLOWED = frozenset(
    {
        "utf-8",
        "utf-8-sig",
        "utf-16",
        "utf-16-le",
        "utf-16-be",
        "utf-32",
        "utf-32-le",
        "utf-32-be",
        "ascii",
        "iso8859-1",
        *(f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16)),
        *(f"cp{n}" for n in range(1250, 1259)),
        "cp874",
        "cp866",
        "koi8-r",
        "koi8-u",
        "mac-roman",
        "mac-cyrillic",
        "shift_jis",
        "cp932",
        "euc_jp",
        "iso2022_jp",
        "gb2312",
        "gbk",
        "gb18030",
        "big5",
        "big5hkscs",
        "euc_kr",
        "cp949",
    }
)
_MAX_NAME = 64


def allowed(name: str | None) -> str | None:
    """The canonical codec name for `name` when it is on the allow-list, else None (unknown or not allowed)."""
    if not name:
        return None
    name = name.strip().strip("\"'").strip()
    if not name or len(name) > _MAX_NAME:
        return None
    try:
        canonical = codecs.lookup(name).name
    except (LookupError, ValueError):
        return None
    return canonical if canonical in ALLOWED else None


def choose(name: str | None) -> str:
    """The codec to decode with: `name`'s when it is on the allow-list, otherwise UTF-8."""
    return allowed(name) or DEFAULT


def decode(data: bytes, charset: str | None, *, final: bool = True) -> str:
    """`data` as text in `choose(charset)`, undecodable bytes as U+FFFD, in pieces of PIECE_BYTES.

    `final=False` when `data` was cut at a size limit: a multi-byte character the cut split in two is
    dropped instead of becoming U+FFFD.
    """
    decoder = codecs.getincrementaldecoder(choose(charset))(errors="replace")
    parts = [decoder.decode(data[i : i + PIECE_BYTES]) for i in range(0, len(data), PIECE_BYTES)]
    if final:
        parts.append(decoder.decode(b"", final=True))
    return "".join(parts)
