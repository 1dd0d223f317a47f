"""BM25 over field-weighted tokens, computed from the term documents the store reads for a query.

A term document holds one token's postings in a workspace: incident id -> [weighted term frequency,
document length]. Tokens in more than DF_CAP incidents are too common to discriminate; they stop
collecting postings and are never read, which bounds what one query reads however large the
workspace grows.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from shared.memory.text import legacy_tokens, tokens

K1, B = 1.2, 0.75
DF_CAP = 400
FIELD_WEIGHTS = {"title": 3.0, "error_signature": 2.0, "tags": 2.0, "summary": 1.0}
MAX_QUERY_CONCEPTS = 12  # first, so a long pasted log keeps what its words mean
CONCEPT_PREFIX = "c_"
MAX_QUERY_TOKENS = 48  # words, the vocabulary's concepts, and index version 1's spellings of the words
# Each indexed term is one or two Cosmos writes: a document indexes its MAX_INDEXED_TERMS heaviest terms.
MAX_INDEXED_TERMS = 100


@dataclass(frozen=True)
class Match:
    incident_id: str
    score: float
    matched_terms: tuple[str, ...]


def incident_terms(title: str, summary: str, error_signature: str, tags: list[str]) -> tuple[dict[str, float], float]:
    """Field-weighted term frequencies of an incident (its MAX_INDEXED_TERMS heaviest: title x3, signature
    and tags x2, summary x1, ties in the order the terms first appear) and its whole weighted length."""
    weighted: dict[str, float] = defaultdict(float)  # float weights: a Counter is typed for int counts
    for field, text in (
        ("title", title),
        ("error_signature", error_signature),
        ("tags", " ".join(tags)),
        ("summary", summary),
    ):
        for tok in tokens(text or ""):
            weighted[tok] += FIELD_WEIGHTS[field]
    length = float(sum(weighted.values()))
    if len(weighted) > MAX_INDEXED_TERMS:
        order = {t: i for i, t in enumerate(weighted)}
        kept = sorted(weighted, key=lambda t: (-weighted[t], order[t]))[:MAX_INDEXED_TERMS]
        weighted = {t: weighted[t] for t in kept}
    return dict(weighted), length


def query_terms(query_text: str) -> list[str]:
    """The query's tokens (its concepts among them), then the tokens index version 1 would have stored for
    it, so incidents indexed before this tokenizer are still found; at most MAX_QUERY_TOKENS."""
    found = tokens(query_text)
    concepts = [t for t in found if t.startswith(CONCEPT_PREFIX)][:MAX_QUERY_CONCEPTS]
    seen: dict[str, None] = {}
    for tok in concepts + [t for t in found if not t.startswith(CONCEPT_PREFIX)] + legacy_tokens(query_text):
        seen.setdefault(tok, None)
    return list(seen)[:MAX_QUERY_TOKENS]


def bm25(postings: dict[str, dict[str, list[float]]], total_docs: int, avg_len: float) -> list[Match]:
    """Rank incidents for the query terms whose postings were read (term -> {incident: [tf, length]})."""
    scores: dict[str, float] = {}
    matched: dict[str, list[str]] = {}
    n = max(total_docs, 1)
    avg = avg_len or 1.0
    for term, plist in postings.items():
        df = len(plist)
        if df == 0:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for incident_id, (tf, length) in plist.items():
            score = idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg))
            scores[incident_id] = scores.get(incident_id, 0.0) + score
            matched.setdefault(incident_id, []).append(term)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return [Match(i, round(s, 4), tuple(sorted(matched[i]))) for i, s in ranked]
