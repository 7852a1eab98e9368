"""Choose at most one skill for a prompt by lexical similarity (BM25L).

The rule, in full:

1. Text is lower-cased, split on anything that is not a letter or digit, stripped of
   English stopwords, of words every task and skill description shares ("file",
   "skill", "use", ...) and of pure numbers, then Snowball-stemmed ("reconciles",
   "reconciler" -> "reconcil").
2. Each staged skill is one document: its folder name, frontmatter name and
   description. The prompt (instruction without its footer) is the query, each
   distinct term once.
3. A skill is *eligible* when the prompt names it (its name's words in order,
   joined by spaces, '-' or '_') or shares at least ``min_shared`` distinct content
   terms with its document (default 2: one shared word such as "report" is
   coincidence, two is a topic).
4. Among eligible skills the choice is: named before unnamed, then higher BM25L
   score, then the smaller folder name. No eligible skill -> no route.

Why BM25L: rank_bm25's BM25Okapi gives a term in every document a negative IDF that
it then floors to a share of the corpus' average IDF, so with one or two staged
skills the scores are zero or negative and carry no signal. BM25L's IDF,
``log(N + 1) - log(df + 0.5)``, stays positive for N = 1 (0.29) and N = 50, and a
document without the term scores exactly 0 for it, so scores are comparable across
corpus sizes. BM25Plus instead adds ``delta * idf`` for query terms a document
lacks, which shifts every document alike and would make absolute scores misleading.
The threshold is on shared terms, not on the score, because a score threshold would
have to change with corpus size.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import snowballstemmer
from pydantic import BaseModel, ConfigDict

DEFAULT_MIN_SHARED = 2
# A placeholder so an all-stopword description still counts as a document: rank_bm25
# divides by the average document length, which would otherwise be 0.
_EMPTY_DOC_TOKEN = "\x00empty"

# English function words (after the classic SMART/NLTK lists, trimmed to words that
# carry no topic).
_ENGLISH_STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been
    before being below between both but by can cannot could did do does doing down
    during each either else ever every few for from further had has have having he
    her here hers herself him himself his how i if in into is it its itself just let
    may me might more most must my myself no nor not now of off on once only or other
    ought our ours ourselves out over own per same shall she should so some such than
    that the their theirs them themselves then there these they this those through to
    too under until up upon us very via was we were what when where whether which while
    who whom whose why will with within without would yet you your yours yourself
    yourselves also etc e g ie eg get gets got one two three many much
    """.split()
)

# Words that appear in nearly every task prompt, footer or skill description, so
# sharing them says nothing about the topic.
_TASK_STOPWORDS = frozenset(
    """
    skill skills use uses used using user users ask asks asked asking need needs
    want wants wanted please help helps task tasks tool tools agent agents file files
    data answer answers write writes written final working directory directories
    input inputs output outputs script scripts run runs running result results
    given give tell show find make provide provides based following like
    """.split()
)

STOPWORDS = _ENGLISH_STOPWORDS | _TASK_STOPWORDS
_WORD = re.compile(r"[a-z0-9]+")


class SkillCard(BaseModel):
    """What routing knows about a staged skill: its folder and frontmatter."""

    model_config = ConfigDict(frozen=True)

    key: str  # folder name under the skills dir; used in commands
    name: str
    description: str


class Candidate(BaseModel):
    """One skill's routing evidence."""

    model_config = ConfigDict(frozen=True)

    key: str
    score: float
    shared_terms: tuple[str, ...]
    named: bool
    eligible: bool


class RouteDecision(BaseModel):
    """The routing outcome: ``chosen`` is a skill key or None, with the evidence."""

    model_config = ConfigDict(frozen=True)

    chosen: str | None
    reason: str
    query_terms: tuple[str, ...]
    min_shared: int
    candidates: tuple[Candidate, ...]


@lru_cache(maxsize=1)
def _stemmer():
    return snowballstemmer.stemmer("english")


def content_terms(text: str) -> list[str]:
    """Stemmed content words of ``text`` in order (duplicates kept)."""
    words = [w for w in _WORD.findall(text.lower()) if len(w) > 1 and not w.isdigit() and w not in STOPWORDS]
    return [s for s in _stemmer().stemWords(words) if s not in STOPWORDS]


def _names_skill(prompt_lower: str, name: str) -> bool:
    parts = _WORD.findall(name.lower())
    if not parts:
        return False
    pattern = r"(?<![a-z0-9])" + r"[\s_-]+".join(map(re.escape, parts)) + r"(?![a-z0-9])"
    return re.search(pattern, prompt_lower) is not None


def _document(card: SkillCard) -> list[str]:
    texts = [card.name, card.description] if card.key == card.name else [card.key, card.name, card.description]
    return content_terms(" ".join(texts)) or [_EMPTY_DOC_TOKEN]


def route(prompt: str, cards: Sequence[SkillCard], *, min_shared: int = DEFAULT_MIN_SHARED) -> RouteDecision:
    """Pick the skill the prompt is about, or None; deterministic for equal inputs.

    ``candidates`` lists every card sorted by the choice order (eligible first), so
    the decision can be audited from the trajectory.
    """
    query = tuple(sorted(set(content_terms(prompt))))
    if not cards:
        return RouteDecision(chosen=None, reason="no skills staged", query_terms=query, min_shared=min_shared, candidates=())
    from rank_bm25 import BM25L  # numpy behind it: ~0.2 s that content_terms' users (dataset create) never need

    docs = [_document(c) for c in cards]
    # Scores are rounded so float noise cannot reorder true ties; ties go to the name.
    scores = [round(float(s), 9) for s in BM25L(docs).get_scores(list(query))] if query else [0.0] * len(cards)
    prompt_lower = prompt.lower()
    candidates = []
    for card, doc, score in zip(cards, docs, scores, strict=True):
        shared = tuple(sorted(set(query) & set(doc)))
        named = _names_skill(prompt_lower, card.name) or _names_skill(prompt_lower, card.key)
        candidates.append(
            Candidate(key=card.key, score=score, shared_terms=shared, named=named, eligible=named or len(shared) >= min_shared)
        )
    candidates.sort(key=lambda c: (not c.eligible, not c.named, -c.score, c.key))
    best = candidates[0]
    if not best.eligible:
        reason = f"no skill shares {min_shared}+ content terms with the prompt or is named in it"
        return RouteDecision(chosen=None, reason=reason, query_terms=query, min_shared=min_shared, candidates=tuple(candidates))
    if best.named:
        reason = f"prompt names skill {best.key!r}"
    else:
        reason = f"shares {len(best.shared_terms)} content terms ({', '.join(best.shared_terms)}); BM25L {best.score:.4f}"
    return RouteDecision(chosen=best.key, reason=reason, query_terms=query, min_shared=min_shared, candidates=tuple(candidates))
