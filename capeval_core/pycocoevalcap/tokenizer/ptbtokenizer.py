"""pycocoevalcap's ``tokenizer.ptbtokenizer``: ``PTBTokenizer().tokenize``, capeval's Python
emulation of the CoreNLP 3.4.1 tokenizer coco-caption runs (no Java)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: punctuation tokens removed from the tokenized captions (pycocoevalcap's list)
PUNCTUATIONS = ["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-",
                ".", "?", "!", ",", ":", "-", "--", "...", ";"]  # fmt: skip


class PTBTokenizer:
    """PTB tokenization, lower-cased, punctuation removed, as pycocoevalcap 1.2.

    >>> PTBTokenizer().tokenize({1: [{"caption": "A dog (really) isn't here."}]})
    {1: ["a dog -lrb- really -rrb- is n't here"]}
    """

    def tokenize(
        self, captions_for_image: Mapping[Any, Sequence[Mapping[str, Any]]]
    ) -> dict[Any, list[str]]:
        """``{image_id: [{"caption": text, ...}, ...]}`` to ``{image_id: [tokenized, ...]}``:
        all captions in one call (the tokenizer looks across caption boundaries, as the jar
        does on its one input file); images without captions are left out, as pycocoevalcap
        leaves them."""
        from capeval_core import ptb

        image_id = [k for k, v in captions_for_image.items() for _ in range(len(v))]
        sentences = []
        for k, v in captions_for_image.items():
            for j, c in enumerate(v):
                text = c["caption"]
                if not isinstance(text, str):
                    raise TypeError(
                        f"PTBTokenizer: caption {j + 1} of image {k!r} must be text "
                        f"(got {type(text).__name__})"
                    )
                sentences.append(text.replace("\n", " "))
        out: dict[Any, list[str]] = {}
        for k, tokens in zip(image_id, ptb.tokenize_lines(sentences), strict=True):
            out.setdefault(k, []).append(" ".join(tokens))
        return out
