"""Every cached call the pages make, and the built-in examples they offer.

All ``st.cache_data`` / ``st.cache_resource`` of the app live here (house style: pages stay
thin). Every cached function takes explicit hashable arguments, so the cache key is the
whole input and nothing is read from session state behind the caller's back.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import streamlit as st

import capeval_core
from capeval_core import resources
from capeval_core.errors import DegenerateCorpusWarning
from capeval_core.resources import CaptionSet, ResourceInfo
from capeval_core.results import MetricResult

#: UI label -> CIDEr-D ``idf`` option; the first is the default (coco-caption's behaviour)
IDF_SOURCES: dict[str, str] = {"scored set": "corpus", "COCO val2014": "coco-val2014"}
DEFAULT_IDF = "scored set"

#: how many COCO val images the random example draws from (ascending image id)
COCO_POOL = 500
COCO_RANDOM = "Random COCO val2014 image"


@dataclass(frozen=True)
class Example:
    """A candidate caption with its references, and where it came from."""

    candidate: str
    references: tuple[str, ...]
    source: str


# Seed-paper Table 2 pattern (Kilickaya et al. 2017): one image's references, and the
# original caption next to a synonym substitution, redundant words and a changed word order.
# The wording is ours (in the COCO style), not the paper's.
_SURF_REFS = (
    "a man riding a wave on top of a surfboard",
    "a surfer rides a large wave in the ocean",
    "a person on a surfboard riding a wave",
    "a man is surfing on a big wave",
    "a surfer in a wetsuit riding a wave",
)
BUILTIN_EXAMPLES: dict[str, Example] = {
    "Table 2 style: original": Example(
        "a man riding a wave on a surfboard", _SURF_REFS, "built-in, seed Table 2 pattern"
    ),
    "Table 2 style: synonyms": Example(
        "a guy riding a swell on a surfboard", _SURF_REFS, "built-in, seed Table 2 pattern"
    ),
    "Table 2 style: redundancy": Example(
        "a man man riding a wave wave on a surfboard surfboard",
        _SURF_REFS,
        "built-in, seed Table 2 pattern",
    ),
    "Table 2 style: word order": Example(
        "a wave riding a man on a surfboard", _SURF_REFS, "built-in, seed Table 2 pattern"
    ),
    "Too short: brevity penalty": Example("a surfer", _SURF_REFS, "built-in"),
}
DEFAULT_EXAMPLE = "Table 2 style: original"


def example_names() -> list[str]:
    """Names for the example picker: the built-ins, then the random COCO image."""
    return [*BUILTIN_EXAMPLES, COCO_RANDOM]


def load_example(name: str, draw: int = 0) -> Example:
    """A built-in example by name, or COCO val image number ``draw`` (mod the pool size)."""
    if name == COCO_RANDOM:
        pool = coco_examples(COCO_POOL)
        chosen = pool[draw % len(pool)]
        return Example(chosen.candidate, chosen.references, f"COCO val2014 image {chosen.image_id}")
    return BUILTIN_EXAMPLES[name]


@st.cache_data(show_spinner="Reading COCO val2014 captions…", max_entries=4)
def coco_examples(n: int) -> list[CaptionSet]:
    """The first ``n`` COCO val2014 images as candidate + references (the benchmark protocol)."""
    return resources.coco_caption_sets("val", n)


@st.cache_data(ttl=60, show_spinner=False)
def inventory() -> list[ResourceInfo]:
    """What capeval finds on this machine; re-read after a minute so installs show up."""
    return resources.inventory()


def scoring_message(cider_idf: str) -> str:
    """Spinner text; the COCO val2014 IDF table is built on first use, which takes a while."""
    if cider_idf == "coco-val2014":
        return (
            "Scoring… the first use of the COCO val2014 IDF builds its table once "
            "(a minute or two) and caches it."
        )
    return "Scoring…"


@st.cache_data(show_spinner=False, max_entries=256)
def score_captions(
    keys: tuple[str, ...],
    candidate: str,
    references: tuple[str, ...],
    tokenizer: str,
    cider_idf: str,
) -> dict[str, MetricResult]:
    """Score one candidate against its references with every key, in one ``score_many`` call.

    CIDEr-D's degenerate-corpus warning is already in ``MetricResult.warnings`` (the page
    shows it), so it is silenced here rather than printed to the server log on every rerun.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateCorpusWarning)
        return capeval_core.score_many(
            keys,
            [candidate],
            [references],
            tokenizer=tokenizer,
            options={"cider_d": {"idf": cider_idf}},
        )
