"""N-gram counting shared by BLEU and CIDEr-D.

The counts are built in the order coco-caption builds them (all unigrams left to right,
then bigrams, ...), because CIDEr-D sums floating-point squares in that order and exact
parity depends on it.
"""

from __future__ import annotations

from collections import Counter

from capeval_core.tokenize import Tokens

Ngram = tuple[str, ...]


def ngram_counts(tokens: Tokens, n: int = 4) -> Counter[Ngram]:
    """Counts of every k-gram, k = 1..n, inserted order by order.

    >>> ngram_counts(("a", "b", "a"), 2)
    Counter({('a',): 2, ('b',): 1, ('a', 'b'): 1, ('b', 'a'): 1})
    """
    counts: Counter[Ngram] = Counter()
    for k in range(1, n + 1):
        # zip of k shifted views yields the k-grams left to right, as tuples, in C
        counts.update(zip(*(tokens[i:] for i in range(k)), strict=False))
    return counts


def ngram_set(tokens: Tokens, n: int = 4) -> set[Ngram]:
    """The distinct k-grams, k = 1..n: what a document frequency counts once per image (no
    counts to keep, a third of the time of :func:`ngram_counts`).

    >>> sorted(ngram_set(("a", "b", "a"), 2))
    [('a',), ('a', 'b'), ('b',), ('b', 'a')]
    """
    grams: set[Ngram] = set()
    for k in range(1, n + 1):
        grams.update(zip(*(tokens[i:] for i in range(k)), strict=False))
    return grams


def coco_words(tokens: Tokens) -> Tokens:
    """The words coco-caption's BLEU and CIDEr-D see: the joined caption re-split by
    ``str.split()``, which also splits at non-ASCII whitespace.

    The PTB tokenizer keeps ``25 1/2`` as one token joined by a no-break space; coco-caption's
    ``split()`` then counts two words (ROUGE-L's ``split(" ")`` does not).

    >>> coco_words(("west", "25\\u00a01/2", "street"))
    ('west', '25', '1/2', 'street')
    """
    joined = " ".join(tokens)
    if joined.isascii():  # tokens never hold ASCII whitespace: nothing to re-split
        return tokens
    return tuple(joined.split())
