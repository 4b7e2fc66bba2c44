"""Tokenizers: ``"ptb"`` (coco-caption compatible) and ``"whitespace"``.

Tokenizers work on batches because the PTB tokenizer coco-caption runs sees every caption
of a call joined by newlines, and a few of its rules look into the next caption
(metric-spec §1.3, "cross-line context").

>>> get_tokenizer("ptb").tokenize_batch(["A dog (really) isn't here.", "Two cats"])
[('a', 'dog', '-lrb-', 'really', '-rrb-', 'is', "n't", 'here'), ('two', 'cats')]
>>> get_tokenizer("whitespace").tokenize("a  b c")
('a', 'b', 'c')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from capeval_core.errors import InputError, OptionError, UnknownKeyError

Tokens = tuple[str, ...]


@runtime_checkable
class Tokenizer(Protocol):
    """What metrics need from a tokenizer: a name for signatures and a batch call."""

    name: str

    def tokenize_batch(self, texts: Sequence[str]) -> list[Tokens]: ...

    def tokenize(self, text: str) -> Tokens: ...


def _texts(texts: Sequence[str], tokenizer: str) -> Sequence[str]:
    """``texts`` if it is a list of strings: a single string would be tokenized character
    by character, bytes or None deep inside with a message about something else."""
    if isinstance(texts, str | bytes):
        raise InputError(f"{tokenizer}: tokenize_batch takes a list of captions, not one string")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(
                f"{tokenizer}: caption {i} must be a string (got {type(text).__name__})"
            )
    return texts


class PTBTokenizer:
    """Pure-Python emulation of coco-caption's PTBTokenizer (CoreNLP 3.4.1, punctuation removed).

    ``tokenize_batch`` matches one call of pycocoevalcap's wrapper on the same list of
    captions; ``tokenize`` treats the text as a batch of one.
    """

    name = "ptb-corenlp-3.4.1"

    def tokenize_batch(self, texts: Sequence[str]) -> list[Tokens]:
        from capeval_core import ptb

        return ptb.tokenize_lines(_texts(texts, self.name))

    def tokenize(self, text: str) -> Tokens:
        return self.tokenize_batch([text])[0]


class WhitespaceTokenizer:
    """Split on whitespace, nothing else: for text that is already tokenized."""

    name = "whitespace"

    def tokenize_batch(self, texts: Sequence[str]) -> list[Tokens]:
        return [tuple(t.split()) for t in _texts(texts, self.name)]

    def tokenize(self, text: str) -> Tokens:
        return self.tokenize_batch([text])[0]


TOKENIZERS: dict[str, type] = {"ptb": PTBTokenizer, "whitespace": WhitespaceTokenizer}
#: each tokenizer's key by the name a signature gives it (``tok:ptb-corenlp-3.4.1``), so a
#: signature's value can be passed back
SIGNATURE_NAMES: dict[str, str] = {cls.name: key for key, cls in TOKENIZERS.items()}


def tokenizer_key(name: str) -> str:
    """The key of a tokenizer given by key or by its signature's name (others as given).

    >>> tokenizer_key("ptb-corenlp-3.4.1"), tokenizer_key("ptb"), tokenizer_key("x")
    ('ptb', 'ptb', 'x')
    """
    return SIGNATURE_NAMES.get(name, name)


def is_builtin(tokenizer: Tokenizer) -> bool:
    """Whether ``tokenizer`` is one of capeval's own (of :data:`TOKENIZERS`' classes), whose
    name in a signature says what it does. A tokenizer of your own has no version a
    signature can carry: numbers from it are never cached on disk, where an edit of its code
    would read the numbers of the code before.

    >>> is_builtin(get_tokenizer("ptb")), is_builtin(type("Mine", (PTBTokenizer,), {"name": "m"})())
    (True, False)
    """
    return type(tokenizer) is TOKENIZERS.get(tokenizer_key(tokenizer.name))


def get_tokenizer(tokenizer: str | Tokenizer = "ptb") -> Tokenizer:
    """A tokenizer by key (``"ptb"``, ``"whitespace"``) or by the name its signatures give it
    (``"ptb-corenlp-3.4.1"``), or the object itself if one is given.

    >>> tok = get_tokenizer("ptb")
    >>> tok.name, tok.tokenize("A dog's bone."), get_tokenizer(tok) is tok
    ('ptb-corenlp-3.4.1', ('a', 'dog', "'s", 'bone'), True)
    """
    if isinstance(tokenizer, str):
        try:
            return TOKENIZERS[tokenizer_key(tokenizer)]()
        except KeyError:
            raise UnknownKeyError(
                f"unknown tokenizer {tokenizer!r}; choose one of {sorted(TOKENIZERS)}"
            ) from None
    if not isinstance(tokenizer, Tokenizer):
        raise OptionError(
            f"`tokenizer` must be one of {sorted(TOKENIZERS)} or a Tokenizer object "
            f"(got {type(tokenizer).__name__})"
        )
    if not isinstance(tokenizer.name, str) or not tokenizer.name or "|" in tokenizer.name:
        raise OptionError(
            f"a tokenizer's name must be a text without '|', which separates a signature's "
            f"parts (got {tokenizer.name!r} of {type(tokenizer).__name__})"
        )
    if tokenizer_key(tokenizer.name) in TOKENIZERS and not is_builtin(tokenizer):
        # a subclass of PTBTokenizer keeps its name: its numbers were signed as the ptb
        # tokenizer's, and read from and written to the caches of the ptb tokenizer's
        raise OptionError(
            f"a tokenizer of your own ({type(tokenizer).__name__}) needs a name of its own: "
            f"{tokenizer.name!r} is capeval's {tokenizer_key(tokenizer.name)!r} tokenizer's, "
            "and signatures and caches would take its numbers for that tokenizer's"
        )
    return tokenizer
