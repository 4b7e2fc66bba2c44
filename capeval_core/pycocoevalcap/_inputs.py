"""What pycocoevalcap's scorers check and read: ``gts`` and ``res`` dicts of tokenized
captions (``{image_id: [caption, ...]}``, one caption per image in ``res``), split on spaces.

The checks raise what pycocoevalcap's ``assert`` statements raise (``AssertionError``), with a
message naming the image; input pycocoevalcap would trip over elsewhere (a caption that is
not a string) raises ``TypeError`` saying what was expected.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from capeval_core.metrics import Batch
from capeval_core.tokenize import Tokens


def check(
    gts: Mapping[Any, Any], res: Mapping[Any, Any], scorer: str, *, strict: bool = True
) -> list[Any]:
    """The image ids in ``gts``'s order, once ``gts`` and ``res`` are found to hold the same
    ids, one caption for each image in ``res`` and at least one in ``gts``. ``strict``: both
    must be lists, as all scorers but METEOR assert."""
    for name, value in (("gts", gts), ("res", res)):
        if not isinstance(value, Mapping):
            raise TypeError(
                f"{scorer}: `{name}` must be a dict {{image_id: [caption, ...]}} "
                f"(got {type(value).__name__})"
            )
    if gts.keys() != res.keys():
        only_gts = [k for k in gts if k not in res]
        only_res = [k for k in res if k not in gts]
        raise AssertionError(
            f"{scorer}: gts and res must hold the same image ids (pycocoevalcap asserts "
            f"gts.keys() == res.keys()); only in gts: {only_gts[:5]}, only in res: "
            f"{only_res[:5]}"
        )
    ids = list(gts)
    for i in ids:
        hypo, ref = res[i], gts[i]
        if strict and type(hypo) is not list:
            raise AssertionError(
                f"{scorer}: res[{i!r}] must be a list holding one caption "
                f"(got {type(hypo).__name__})"
            )
        if len(hypo) != 1:
            raise AssertionError(
                f"{scorer}: res[{i!r}] must hold exactly one caption (pycocoevalcap asserts "
                f"len(hypo) == 1; got {_count(hypo)})"
            )
        if strict and type(ref) is not list:
            raise AssertionError(
                f"{scorer}: gts[{i!r}] must be a list of captions (got {type(ref).__name__})"
            )
        if len(ref) < 1:
            raise AssertionError(
                f"{scorer}: gts[{i!r}] holds no reference caption (pycocoevalcap asserts "
                "len(ref) >= 1)"
            )
        for what, texts in ((f"res[{i!r}]", hypo), (f"gts[{i!r}]", ref)):
            for j, text in enumerate(texts):
                if not isinstance(text, str):
                    raise TypeError(
                        f"{scorer}: {what}[{j}] must be a tokenized caption string (got "
                        f"{type(text).__name__}); tokenize {{'caption': ...}} records with "
                        "PTBTokenizer().tokenize first"
                    )
    return ids


def texts(
    gts: Mapping[Any, Any], res: Mapping[Any, Any], ids: Sequence[Any]
) -> tuple[list[str], list[list[str]]]:
    """Each image's candidate and references, in the order of ``ids``."""
    return [res[i][0] for i in ids], [list(gts[i]) for i in ids]


def spaced(text: str) -> Tokens:
    """A tokenized caption as pycocoevalcap's ROUGE-L reads it, ``split(" ")`` (the empty
    caption is no token: ROUGE-L adds the empty one back, BLEU and CIDEr count none)."""
    return tuple(text.split(" ")) if text else ()


def plain(text: str) -> bool:
    """Whether the caption's words are the same split on spaces and on whitespace (single
    spaces between words, nothing else): then every scorer reads it alike."""
    return text.split() == text.split(" ")


def spaced_batch(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> Batch:
    """A batch whose tokens are the captions split on single spaces, as pycocoevalcap's
    scorers split them (ROUGE-L) or hand them on (METEOR and SPICE get the string back). For
    captions with single spaces between words these are the ``whitespace`` tokenizer's tokens,
    whose name the batch bears."""
    return Batch(
        tuple(candidates),
        tuple(tuple(group) for group in references),
        tuple(spaced(c) for c in candidates),
        tuple(tuple(spaced(r) for r in group) for group in references),
        "whitespace",
    )


def ngram_counts(s: str, n: int = 4) -> defaultdict[tuple[str, ...], int]:
    """Each 1- to ``n``-gram of ``s`` split at whitespace with its count: what both scorers'
    module function ``precook`` counts (a ``defaultdict(int)``, as theirs).

    >>> dict(ngram_counts("a dog a", 2))
    {('a',): 2, ('dog',): 1, ('a', 'dog'): 1, ('dog', 'a'): 1}
    """
    words = s.split()
    counts: defaultdict[tuple[str, ...], int] = defaultdict(int)
    for k in range(1, n + 1):
        for i in range(len(words) - k + 1):
            counts[tuple(words[i : i + k])] += 1
    return counts


class Pairs:
    """What pycocoevalcap's ``BleuScorer`` and ``CiderScorer`` share: candidates and their
    references added one pair at a time (``cook_append``, ``+=`` a pair or another scorer),
    kept as the strings given and split on spaces when scored (:meth:`token_lists`)."""

    def __init__(self) -> None:
        self.crefs: list[list[str]] = []
        self.ctest: list[str | None] = []

    def cook_append(self, test: str | None, refs: list[str] | None) -> None:
        """Add one candidate and its references (nothing without references)."""
        if refs is not None:
            for text in (test, *refs):
                if text is not None and not isinstance(text, str):
                    raise TypeError(
                        f"{type(self).__name__}: captions are strings (got {type(text).__name__})"
                    )
            self.crefs.append(list(refs))
            self.ctest.append(test)
        self._changed()

    def __iadd__(self, other: Any) -> Any:
        if type(other) is tuple:
            self.cook_append(other[0], other[1])
        else:
            self._check_compatible(other)
            self.ctest.extend(other.ctest)
            self.crefs.extend(other.crefs)
            self._changed()
        return self

    def size(self) -> int:
        """How many pairs were added."""
        return len(self.crefs)

    def copy(self) -> Any:
        """A scorer holding the same pairs and nothing computed from them (as
        pycocoevalcap's copy: a scored BleuScorer's copy returned its cached corpus values
        alone, not the pair ``(score, scores)``)."""
        new = copy.deepcopy(self)
        new._changed()
        return new

    def token_lists(self) -> tuple[list[Tokens], list[list[Tokens]]]:
        """The candidates and their references split on spaces, as pycocoevalcap cooks them."""
        if any(t is None for t in self.ctest):
            raise TypeError(f"{type(self).__name__}: a pair was added without a candidate")
        return (
            [tuple(t.split()) for t in self.ctest],  # type: ignore[union-attr]
            [[tuple(r.split()) for r in refs] for refs in self.crefs],
        )

    def _changed(self) -> None:
        """A pair was added: what was computed before no longer holds."""

    def _check_compatible(self, other: Any) -> None:
        """Another scorer's pairs may be added (BLEU's of another order may not)."""


def _count(value: object) -> str:
    """How many captions ``value`` holds, as a message says it: a string is one caption
    given bare, whose length is its characters.

    >>> _count(["a", "b"]), _count("a dog")
    ('2', 'a string of 5 characters, not a list')
    """
    if isinstance(value, str):
        return f"a string of {len(value)} characters, not a list"
    return str(len(value))  # type: ignore[arg-type]
