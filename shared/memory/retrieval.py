"""One relevance per incident from three signals: the lexical index (BM25), meaning (embeddings), and the
exact error-signature match (ranking.relevance puts exact matches above everything else).

fused = W_LEXICAL * bm25 / best bm25 + (1 - W_LEXICAL) * semantic, where an incident's semantic score is
its cosine to the query rescaled per model between the workspace's median cosine (0) and the best one (1),
averaged over the models that have its vector. W_LEXICAL and the median floor were chosen on the tune
halves of tests/fixtures/memory/paraphrases*.json (README: measured figures). An incident that shares no
word with the query is a candidate only when some model puts it at or above that model's min_similarity,
so a question about nothing in the memory still finds nothing. Without any model (disabled, or it failed)
the fused score is the lexical one alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

W_LEXICAL = 0.4


@dataclass(frozen=True)
class SemanticScores:
    """One model's view of the query: rescaled scores and raw cosines per incident that has its vector."""

    scaled: dict[str, float]
    cosine: dict[str, float]
    min_similarity: float

    @classmethod
    def of(cls, ids: tuple[str, ...], matrix: np.ndarray, query: np.ndarray, min_similarity: float) -> SemanticScores:
        if not ids or matrix.shape[1] != query.shape[0]:
            return cls({}, {}, min_similarity)
        cosines = matrix @ query
        floor, top = float(np.median(cosines)), float(cosines.max())
        span = top - floor if top > floor else 1.0
        scaled = np.clip((cosines - floor) / span, 0.0, 1.0)
        return cls(
            dict(zip(ids, scaled.tolist(), strict=True)), dict(zip(ids, cosines.tolist(), strict=True)), min_similarity
        )

    def admits(self, incident_id: str) -> bool:
        return self.cosine.get(incident_id, -1.0) >= self.min_similarity


def fuse(lexical: dict[str, float], semantic: list[SemanticScores]) -> dict[str, float]:
    """Fused scores of the candidates: every lexical match, and incidents some model admits on meaning alone."""
    top = max(lexical.values(), default=0.0) or 1.0
    candidates = set(lexical) | {i for s in semantic for i in s.cosine if s.admits(i)}
    fused: dict[str, float] = {}
    for incident_id in candidates:
        lex = lexical.get(incident_id, 0.0) / top
        views = [s.scaled[incident_id] for s in semantic if incident_id in s.scaled]
        # An incident without a vector (indexed before vectors existed) is judged on its words alone.
        sem = sum(views) / len(views) if views else lex
        fused[incident_id] = round(W_LEXICAL * lex + (1 - W_LEXICAL) * sem if semantic else lex, 6)
    return fused
