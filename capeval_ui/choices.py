"""What the pages offer and start from: the example picker, the CIDEr-D IDF sources and
SPICE parsers with their help, the words of the scoring spinner, the demo sets, the lab's
batch datasets and the default metric selections.

Page wording and defaults only; nothing here is cached (the COCO examples are read through
``capeval_ui.cached``) and the examples themselves live in ``capeval_core.examples``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence

from capeval_core import CapevalError, examples, inventory
from capeval_core.examples import BUILTIN_EXAMPLES, Example
from capeval_ui import cached, formats

#: UI label -> CIDEr-D ``idf`` option. One caption is scored with COCO val2014's document
#: frequencies by default (the scored set of one image makes every CIDEr-D weight 0); the
#: scored set is coco-caption's behaviour, the default of batch scoring and the CLI.
IDF_SOURCES: dict[str, str] = {"COCO val2014": "coco-val2014", "scored set": "corpus"}
DEFAULT_IDF = "COCO val2014"
IDF_HELP = (
    "COCO val2014 (the default here) takes document frequencies from the references of the "
    "40,504 val2014 images, so a single caption gets informative weights. The scored set is "
    "what coco-caption does (and capeval's batch scoring and CLI by default): with one image "
    "every weight is 0."
)

#: the example pickers' entry that draws a COCO val2014 image
COCO_RANDOM = "Random COCO val2014 image"
#: what the example pickers show once their text areas are edited
YOUR_OWN = "Your own captions"


def is_parser_name(name: str | None) -> bool:
    """Whether ``name`` is a SPICE parser a link may name: the retired ones (said by
    :func:`retired_parser_note`) or the one in use.

    >>> is_parser_name("stanford-pcfg"), is_parser_name("spacy-sm"), is_parser_name("x")
    (True, True, False)
    """
    from capeval_core.spice.parse import PARSERS, RETIRED_PARSERS

    return name in RETIRED_PARSERS or name in PARSERS


def retired_parser_note(name: str | None) -> str | None:
    """What Compare says to a link naming a retired SPICE parser (``spice_parser=...``, from
    the versions that offered a choice); None for any other value.

    >>> retired_parser_note("stanford-pcfg") is None
    True
    """
    from capeval_core.spice.parse import RETIRED_PARSERS

    if name not in RETIRED_PARSERS:
        return None
    return (
        f"This link asks for SPICE's parser {name!r} ({RETIRED_PARSERS[name][0]}), which was "
        "retired: its numbers were not the SPICE jar's. SPICE here is computed with CoreNLP "
        "3.6.0's PCFG (stanford-pcfg), the jar's own parser."
    )


def example_names() -> list[str]:
    """Names for the example picker: the built-ins, the random COCO image, your own."""
    return [*BUILTIN_EXAMPLES, COCO_RANDOM, YOUR_OWN]


def load_example(name: str, draw: int = 0) -> Example:
    """A built-in example by name, or COCO val image number ``draw`` (mod the pool size)."""
    if name == COCO_RANDOM:
        return examples.coco_example(cached.coco_examples(examples.COCO_POOL), draw)
    return BUILTIN_EXAMPLES[name]


def known_examples(draw: int | None) -> dict[str, Example]:
    """The examples captions on a page may be (a link holds only the captions): the
    built-ins, and COCO image number ``draw`` when a draw is known and COCO's captions can be
    read (a link names its draw, so a reload names the image again)."""
    known = dict(BUILTIN_EXAMPLES)
    if draw is not None:
        # without COCO's captions a COCO image's captions are the user's own (a link from a
        # server that has them); picking the random image then says why
        with contextlib.suppress(CapevalError):
            known[COCO_RANDOM] = load_example(COCO_RANDOM, draw)
    return known


def scoring_message(texts: Sequence[str]) -> str:
    """Spinner text naming what the first scoring run prepares (resources load once), and a
    long sentence among ``texts`` that SPICE's parser works on for a while (issue 41).

    METEOR's paraphrase index and the default word vectors are each built or loaded on first
    use (``capeval_core.inventory.first_use_pending``), which takes a while. The COCO val2014
    IDF table is not named: it has its own progress bar (``progress.prepare_coco_idf``),
    drawn before every scoring that uses it, and the spinner said it was built on every run.
    """
    from capeval_core.spice.stanford_pcfg import long_sentences

    pending = inventory.first_use_pending()
    long = long_sentences(texts)
    if long:
        many = f" (and {len(long) - 1} more)" if len(long) > 1 else ""
        pending.append(
            f"SPICE parses a {long[0]}-word sentence{many} with CoreNLP's exact parser, as "
            "the jar does: a long sentence takes from seconds to minutes (parses are cached)"
        )
    if not pending:
        return "Scoring…"
    return "Scoring… " + "; ".join(pending) + "."


# -- meta-evaluation pages (Judgments, Correlations, Significance, Pairwise, Robustness) -------
#: the default metric selection of the meta-evaluation pages: fast, no extra downloads
FAST_KEYS: tuple[str, ...] = ("bleu_4", "rouge_l", "cider_d", "meteor")
#: demo set label -> (generator, images); every page works without an upload
DEMO_SETS: dict[str, tuple[str, int]] = {
    "Graded demo (synthetic, 200 COCO val2014 images × 5 systems)": ("graded", 200),
    "Pairwise demo (synthetic, PASCAL-50S style, 400 pairs)": ("pairwise", 400),
}
DISTRACTOR_DEMO = ("distractors", 200)

# -- Perturbation lab, Systems ------------------------------------------------------------------
#: batch-mode datasets of the lab: label -> name ``capeval_core.perturb.batch_dataset`` knows
#: (``capeval perturb --dataset`` knows the first two by the same names)
LAB_DATASETS: dict[str, str] = {
    "COCO val2014 (first images)": "coco-val",
    "Synthetic graded demo (has human-like scores)": "demo-graded",
    "Judgment set loaded on the Judgments page": "loaded",
}
#: what the Systems page scores by default
SYSTEMS_DEFAULT_KEYS = ("bleu_4", "rouge_l", "cider_d")


# -- messages in the page's words --------------------------------------------------------------
_KEEPS = "the page keeps this limit; `capeval` on the command line raises it with"
#: the library's words -> the page's (the command line's are
#: ``capeval_core.cli.output.CLI_WORDS``): the pages keep the documented limits (no control
#: raises them) and have no control for some keyword arguments; a multi-file upload reads its
#: companions as a folder does
PAGE_WORDS = {
    "raise it with the `max_bytes` option": f"{_KEEPS} --max-bytes",
    "raise it with the `max_caption_tokens` option": f"{_KEEPS} --max-caption-tokens",
    "raise it with the `max_references` option": f"{_KEEPS} --max-references",
    "; name one with `score_columns`": "",
    ", or pass `file_format`": "",
    " or use idf='coco-val2014'": "",  # the Systems page takes the scored images' IDF
    ", or a COCO captions file as `references_from`": "",
    ", or map it with the `columns` option": "",
    # a run that stops keeps nothing, and the page says so before the message
    "; the set is unchanged": "",
    ", or pass `references_from` with its caption file": "",
    "pass `references_from` (a Flickr token file or COCO captions JSON)": "upload its caption "
    "file (a Flickr token file or COCO captions JSON) with it",
}
_LIBRARY_WORDS = re.compile("(" + "|".join(map(re.escape, PAGE_WORDS)) + ")")


def page_message(message: str) -> str:
    r"""A core message as a page shows it: the library's words in the page's
    (:data:`PAGE_WORDS`), and everything else escaped for Markdown, since a message quotes
    file names and cell text (``**x**.csv`` shows as typed, not bold).

    >>> print(page_message("big; raise it with the `max_bytes` option"))
    big; the page keeps this limit; `capeval` on the command line raises it with --max-bytes
    >>> print(page_message("**x**.csv, line 1: no score; name one with `score_columns`"))
    \*\*x\*\*.csv, line 1: no score
    """
    parts = _LIBRARY_WORDS.split(message)
    return "".join(PAGE_WORDS[p] if i % 2 else formats.literal(p) for i, p in enumerate(parts))
