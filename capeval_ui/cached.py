"""Every cached call the pages make, and the built-in examples they offer.

All ``st.cache_data`` / ``st.cache_resource`` of the app live here (house style: pages stay
thin). Every cached function takes explicit hashable arguments, so the cache key is the
whole input and nothing is read from session state behind the caller's back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

import capeval_core
from capeval_core import embeddings as _embeddings
from capeval_core import meteor_resources as _meteor_resources
from capeval_core import resources
from capeval_core.errors import CapevalError, MissingResourceError
from capeval_core.metrics import metric_class
from capeval_core.resources import CaptionSet, ResourceInfo
from capeval_core.results import MetricResult
from capeval_core.spice.parse import DEFAULT_PARSER

#: UI label -> CIDEr-D ``idf`` option. One caption is scored with COCO val2014's document
#: frequencies by default (the scored set of one image makes every CIDEr-D weight 0); the
#: scored set is coco-caption's behaviour, the default of batch scoring and the CLI.
IDF_SOURCES: dict[str, str] = {"COCO val2014": "coco-val2014", "scored set": "corpus"}
DEFAULT_IDF = "COCO val2014"
#: SPICE's parsers as the Compare page offers them
SPICE_PARSERS: dict[str, str] = {
    "CoreNLP's PCFG (the jar's)": "stanford-pcfg",
    "emulated (fast, close)": "stanford-emulation",
    "spaCy sm": "spacy-sm",
}
DEFAULT_SPICE_PARSER = "CoreNLP's PCFG (the jar's)"
SPICE_PARSER_HELP = (
    "CoreNLP's PCFG (the default): the SPICE jar's own parser, recomputed without Java, so the "
    "jar's numbers; about 10 ms a caption, COCO val2014 captions come parsed. Emulated: a "
    "parser trained on the jar's own parses, about 1 ms a caption, the jar's tuples for about "
    "four captions in five. spaCy sm: capeval's first parser."
)
IDF_HELP = (
    "COCO val2014 (the default here) takes document frequencies from the references of the "
    "40,504 val2014 images, so a single caption gets informative weights. The scored set is "
    "what coco-caption does (and capeval's batch scoring and CLI by default): with one image "
    "every weight is 0."
)

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
TABLE2_SOURCE = (
    "the pattern of Table 2 in Kilickaya et al. (2017), “Re-evaluating Automatic Metrics for "
    "Image Captioning” (EACL): one image's references, and a caption of it as written, with "
    "synonyms, with redundant words, or with its words reordered. The captions are capeval's "
    "own, in the COCO style, not the paper's."
)
#: what the example pickers show once their text areas are edited
YOUR_OWN = "Your own captions"
_SURF_REFS = (
    "a man riding a wave on top of a surfboard",
    "a surfer rides a large wave in the ocean",
    "a person on a surfboard riding a wave",
    "a man is surfing on a big wave",
    "a surfer in a wetsuit riding a wave",
)
BUILTIN_EXAMPLES: dict[str, Example] = {
    "Table 2 style: original": Example(
        "a man riding a wave on a surfboard", _SURF_REFS, TABLE2_SOURCE
    ),
    "Table 2 style: synonyms": Example(
        "a guy riding a swell on a surfboard", _SURF_REFS, TABLE2_SOURCE
    ),
    "Table 2 style: redundancy": Example(
        "a man man riding a wave wave on a surfboard surfboard",
        _SURF_REFS,
        TABLE2_SOURCE,
    ),
    "Table 2 style: word order": Example(
        "a wave riding a man on a surfboard", _SURF_REFS, TABLE2_SOURCE
    ),
    "Too short: brevity penalty": Example(
        "a surfer", _SURF_REFS, "built-in: a two-word caption, which BLEU's brevity penalty hits"
    ),
}
DEFAULT_EXAMPLE = "Table 2 style: original"


def example_names() -> list[str]:
    """Names for the example picker: the built-ins, the random COCO image, your own."""
    return [*BUILTIN_EXAMPLES, COCO_RANDOM, YOUR_OWN]


def load_example(name: str, draw: int = 0) -> Example:
    """A built-in example by name, or COCO val image number ``draw`` (mod the pool size)."""
    if name == COCO_RANDOM:
        pool = coco_examples(COCO_POOL)
        chosen = pool[draw % len(pool)]
        return Example(chosen.candidate, chosen.references, f"COCO val2014 image {chosen.image_id}")
    return BUILTIN_EXAMPLES[name]


def _progress_bar(text: str) -> tuple[Any, Callable[[int, int, str], None]]:
    """A Streamlit progress bar and the ``on_progress(done, total, label)`` that moves it."""
    bar = st.progress(0.0, text=text)

    def progress(done: int, total: int, label: str) -> None:
        bar.progress(min(done / max(total, 1), 1.0), text=f"Scoring: {label} ({done}/{total})")

    return bar, progress


@st.cache_data(show_spinner="Reading COCO val2014 captions…", max_entries=4)
def coco_examples(n: int) -> list[CaptionSet]:
    """The first ``n`` COCO val2014 images as candidate + references (the benchmark protocol)."""
    return resources.coco_caption_sets("val", n)


@st.cache_data(ttl=60, show_spinner=False)
def inventory() -> list[ResourceInfo]:
    """What capeval finds on this machine; re-read after a minute so installs show up."""
    return resources.inventory()


def _first_use() -> list[str]:
    """What the next scoring run has to load or build first (empty once everything is warm).

    Reads the process caches without filling them, so it never raises and costs nothing.
    """
    pending = []
    try:
        if not _meteor_resources.paraphrase_index_path().is_file():
            pending.append(
                "building METEOR's paraphrase index once into the user cache "
                "(30–100 s, only the very first time on this machine)"
            )
        elif not _meteor_resources.meteor_synsets.cache_info().currsize:
            pending.append("opening METEOR's synonym and paraphrase resources")
    except (AttributeError, CapevalError, OSError):
        pass  # a missing resource is reported by the metric itself
    try:
        if not _embeddings.default_embeddings.cache_info().currsize:
            pending.append("loading the GloVe 6B 50-d word vectors for WMD and MEAN (a few s)")
    except AttributeError:
        pass
    return pending


def scoring_message(cider_idf: str) -> str:
    """Spinner text naming what the first scoring run prepares (resources load once).

    METEOR's paraphrase index and the default word vectors are each built or loaded on first
    use, which takes a while; the COCO val2014 IDF table has its own progress bar
    (:func:`prepare_coco_idf`), and is named here only for callers that skip it.
    """
    pending = _first_use()
    if cider_idf == "coco-val2014":
        pending.append(
            "the first use of the COCO val2014 IDF builds its table once (a few seconds) "
            "and caches it"
        )
    if not pending:
        return "Scoring…"
    return "Scoring… " + "; ".join(pending) + "."


def prepare_coco_idf(tokenizer: str) -> None:
    """Have the COCO val2014 document frequencies of ``tokenizer`` in memory before scoring:
    read back from the user cache (about a second, with a spinner), or built there once with
    a progress bar. The table stays in the process (``capeval_core.idf``) for every session.

    A build that cannot run (no pycocoevalcap) is left to the scoring call, which reports it
    as CIDEr-D's error.
    """
    from capeval_core import idf
    from capeval_core.tokenize import get_tokenizer

    tok = get_tokenizer(tokenizer)
    where = idf.coco_val_state(tok)
    if where == "memory":
        return
    if where == "cache":
        with st.spinner("Reading the COCO val2014 document frequencies from the cache…"):
            _quietly(idf.coco_val_document_frequency, tok)
        return
    bar = st.progress(0.0, text="Building the COCO val2014 document frequencies (once)…")

    def progress(done: int, total: int, what: str) -> None:
        bar.progress(
            min(done / max(total, 1), 1.0),
            text=f"Building the COCO val2014 document frequencies once: {what}",
        )

    _quietly(idf.coco_val_document_frequency, tok, progress)
    bar.empty()


def _quietly(fn: Any, *args: Any) -> None:
    # a failure is reported by the scoring call, as CIDEr-D's error
    with contextlib.suppress(CapevalError):
        fn(*args)


@dataclass(frozen=True)
class Scores:
    """What :func:`score_captions` returns: the results, and why any metric is missing.

    ``errors`` maps a metric key (``"wmd"``, not ``"bleu_2"``) to the message of the
    :class:`CapevalError` that stopped it (e.g. a missing resource); its keys are absent
    from ``results`` and the other metrics still score. ``missing`` holds the keys of
    ``errors`` whose cause was a missing resource.
    """

    results: dict[str, MetricResult]
    errors: dict[str, str]
    missing: frozenset[str] = frozenset()


def _score(
    keys: tuple[str, ...],
    candidate: str,
    references: tuple[str, ...],
    tokenizer: str,
    cider_idf: str,
    spice_parser: str,
) -> Scores:
    errors: dict[str, CapevalError] = {}
    results = capeval_core.score_many(
        keys,
        [candidate],
        [references],
        tokenizer=tokenizer,
        options={"cider_d": {"idf": cider_idf}, "spice": {"parser": spice_parser}},
        warn=False,
        errors=errors,
    )
    messages = {metric_class(k).key: str(exc) for k, exc in errors.items()}
    missing = frozenset(
        metric_class(k).key for k, exc in errors.items() if isinstance(exc, MissingResourceError)
    )
    return Scores(results, messages, missing)


#: the same scoring, cached on its whole input
_cached_scores = st.cache_data(show_spinner=False, max_entries=256)(_score)


def score_captions(
    keys: tuple[str, ...],
    candidate: str,
    references: tuple[str, ...],
    tokenizer: str,
    cider_idf: str,
    spice_parser: str = DEFAULT_PARSER,
) -> Scores:
    """Score one candidate against its references with every key, in one ``score_many`` call.

    Degenerate-input notes (CIDEr-D on one image) stay in ``MetricResult.warnings`` (the
    page shows them) instead of being printed to the server log on every rerun. A metric
    stopped by a missing resource is tried again on every call, outside the cache: the user
    may have provided the resource since (word vectors, a reinstalled package), and the
    same inputs must then score without a restart.
    """
    args = (candidate, references, tokenizer, cider_idf, spice_parser)
    scores = _cached_scores(keys, *args)
    retry = tuple(k for k in keys if metric_class(k).key in scores.missing)
    if not retry:
        return scores
    fresh = _score(retry, *args)
    results = {k: r for k in keys if (r := scores.results.get(k, fresh.results.get(k))) is not None}
    errors = {k: m for k, m in scores.errors.items() if k not in scores.missing}
    return Scores(results, {**errors, **fresh.errors}, fresh.missing)


def clear_scores() -> None:
    """Forget every cached score of the Compare page (tests start from a cold cache)."""
    _cached_scores.clear()


# -- meta-evaluation (Judgments, Correlations, Significance, Pairwise accuracy, Robustness) -----
# The loaded JudgmentSet lives in st.session_state; cached functions take its content digest
# (hashable, the cache key) and the set itself as ``_jset`` (not hashed by Streamlit).

#: the default metric selection of the meta-evaluation pages: fast, no extra downloads
FAST_KEYS: tuple[str, ...] = ("bleu_4", "rouge_l", "cider_d", "meteor")
#: session-state keys: the graded/pairwise set loaded on the Judgments page, the distractor
#: set uploaded on the Robustness page, and the message of the last failed upload
JSET_KEY = "judgment_set"
DISTRACTOR_SET_KEY = "distractor_set"
#: demo set label -> (generator, images); every page works without an upload
DEMO_SETS: dict[str, tuple[str, int]] = {
    "Graded demo (synthetic, 200 COCO val2014 images × 5 systems)": ("graded", 200),
    "Pairwise demo (synthetic, PASCAL-50S style, 400 pairs)": ("pairwise", 400),
}
DISTRACTOR_DEMO = ("distractors", 200)
#: the pairwise knobs of the published PASCAL-50S protocol
PASCAL_REFERENCES, PASCAL_DRAWS = 5, 5
#: forced choice scores against every reference (no sampling): one draw of "all" of them
ALL_REFERENCES = 10_000


@st.cache_resource(show_spinner="Building the demo judgment set from COCO val2014…")
def demo_judgments(generator: str, n_images: int, seed: int = 0) -> object:
    """A synthetic demo set (``capeval_core.judgments.demo``), built once per process."""
    from capeval_core.judgments import demo

    make = {
        "graded": demo.demo_graded,
        "pairwise": demo.demo_pairwise,
        "distractors": demo.demo_distractors,
    }[generator]
    return make(n_images, seed=seed)


@st.cache_resource(show_spinner=False)
def _loaded_sets() -> dict[str, object]:
    """The judgment sets this server process has loaded, by digest prefix (newest last)."""
    return {}


#: how many loaded sets a reload can find again (uploads are kept in memory this long anyway:
#: ``load_upload`` caches its last 8 results)
KEEP_SETS = 8


def remember_set(jset: object) -> str:
    """Keep ``jset`` findable by its digest prefix (the URL's ``set``); returns the prefix."""
    sets = _loaded_sets()
    short = jset.content_digest[:16]  # type: ignore[attr-defined]
    sets.pop(short, None)
    sets[short] = jset
    while len(sets) > KEEP_SETS:
        sets.pop(next(iter(sets)))
    return short


def find_set(short: str) -> object | None:
    """A set :func:`remember_set` kept, or None (unknown prefix, or dropped since)."""
    return _loaded_sets().get(short)


def set_for(kind: str) -> tuple[object, str]:
    """The set a page works on, and where it came from: the loaded set when it is of
    ``kind`` ("graded" or "pairwise"), else the matching demo set (the page says so)."""
    loaded = st.session_state.get(JSET_KEY)
    if loaded is not None and loaded.kind == kind:
        return loaded, "loaded"
    label = next(name for name, (gen, _) in DEMO_SETS.items() if gen == kind)
    generator, n_images = DEMO_SETS[label]
    why = "no set loaded" if loaded is None else f"the loaded set is {loaded.kind}, not {kind}"
    return demo_judgments(generator, n_images), f"demo ({why})"


def _write_uploads(files: tuple[tuple[str, bytes], ...], folder: str) -> object:
    """The uploaded files in ``folder``; the one file, or the folder for multi-file formats."""
    from pathlib import Path

    paths = []
    for name, data in files:
        path = Path(folder) / Path(name).name  # no directories from the browser's name
        path.write_bytes(data)
        paths.append(path)
    return paths[0] if len(paths) == 1 else Path(folder)


def _as_uploaded(exc: CapevalError, folder: str) -> CapevalError:
    """``exc`` with the temporary folder the uploads were written to named as what the user
    uploaded ("ExpertAnnotations.txt not found among the uploaded files", not "... in the
    folder 'tmpqs6a2tlb'")."""
    import os
    from pathlib import Path

    tmp = Path(folder)
    message = str(exc)
    for quoted in (f"'{tmp}'", f"'{tmp.name}'", f'"{tmp}"', f'"{tmp.name}"'):
        message = message.replace(f"in the folder {quoted}", "among the uploaded files")
        message = message.replace(f"in folder {quoted}", "among the uploaded files")
        message = message.replace(quoted, "the uploaded files")
    message = message.replace(f"{tmp}{os.sep}", "").replace(str(tmp), "the uploaded files")
    message = message.replace(tmp.name, "the uploaded files")
    exc.args = (message, *exc.args[1:])
    return exc


def _uploaded_source(jset: object, files: tuple[tuple[str, bytes], ...], folder: str) -> object:
    """The set with its ``source`` naming the uploaded files, never the temporary folder."""
    import dataclasses
    from pathlib import Path

    names = [Path(name).name for name, _ in files]
    tmp = Path(folder).name
    source = tuple(s for s in jset.source if tmp not in s and s != "mapped")  # type: ignore[attr-defined]
    return dataclasses.replace(jset, source=source or tuple(names))  # type: ignore[type-var]


@st.cache_data(show_spinner="Reading the file…", max_entries=16)
def upload_columns(name: str, data: bytes) -> tuple[list[str], list[str]]:
    """``(columns, numeric columns)`` of an uploaded generic file, for the column mapping."""
    import tempfile

    from capeval_core.judgments.mapping import peek_columns

    with tempfile.TemporaryDirectory() as tmp:
        try:
            return peek_columns(_write_uploads(((name, data),), tmp))
        except CapevalError as exc:
            raise _as_uploaded(exc, tmp) from None


@st.cache_data(show_spinner="Reading and validating the judgments…", max_entries=8)
def load_upload(
    files: tuple[tuple[str, bytes], ...],
    fmt: str,
    preset: str | None,
    mapping: tuple[tuple[str, str], ...] = (),
    score_columns: tuple[str, ...] | None = None,
) -> object:
    """Load uploaded judgment file(s) with the registry loader ``fmt``.

    ``mapping`` renames file columns to the generic format's names first (graded and
    pairwise only). Raises ``JudgmentFormatError`` naming file, line and column.
    """
    import hashlib
    import tempfile
    from pathlib import Path

    from capeval_core.judgments import load_judgments
    from capeval_core.judgments.mapping import remap_columns

    options: dict[str, object] = {}
    if score_columns:
        options["score_columns"] = list(score_columns)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            path = _write_uploads(files, tmp)
            if mapping and len(files) == 1:
                mapped = Path(tmp) / "mapped"
                mapped.mkdir()
                path = remap_columns(path, dict(mapping), mapped / Path(path).name)
                # external metrics are signed with the file as uploaded, not the mapped copy
                options["checksum"] = hashlib.sha256(files[0][1]).hexdigest()
            jset = load_judgments(path, fmt, preset, **options)
        except CapevalError as exc:
            raise _as_uploaded(exc, tmp) from None
        return _uploaded_source(jset, files, tmp)


def join_scores_upload(jset: object, name: str, data: bytes) -> object:
    """``jset`` with an uploaded scores file joined (its external metrics); errors name the
    file as uploaded. Not cached: the join is quick, and the set is new each time."""
    import tempfile

    from capeval_core.judgments.external import join_scores_file

    with tempfile.TemporaryDirectory() as tmp:
        try:
            return join_scores_file(jset, _write_uploads(((name, data),), tmp))  # type: ignore[arg-type]
        except CapevalError as exc:
            raise _as_uploaded(exc, tmp) from None


@st.cache_data(show_spinner=False, max_entries=32)
def judgment_scores(
    digest: str,
    keys: tuple[str, ...],
    tokenizer: str,
    n_references: int = PASCAL_REFERENCES,
    draws: int = PASCAL_DRAWS,
    seed: int = 0,
    *,
    _jset: object,
) -> object:
    """Every item of the set scored with ``keys`` (disk-cached by ``score_judgments`` too),
    with a progress bar while it runs. The bar is created and removed inside this function,
    so a cache hit replays nothing visible."""
    import warnings

    from capeval_core.errors import DegenerateCorpusWarning
    from capeval_core.judgments.scoring import score_judgments
    from capeval_core.resources import available_cpus

    bar, progress = _progress_bar("Scoring the judgments…")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateCorpusWarning)
        scores = score_judgments(
            _jset,
            keys,
            tokenizer=tokenizer,
            n_references=n_references,
            draws=draws,
            seed=seed,
            workers=available_cpus(),  # used on large sets only
            on_progress=progress,
            on_error="skip",
        )
    bar.empty()
    return scores


@dataclass(frozen=True)
class CorrelationReport:
    """What the Correlations page shows."""

    table: object  # pd.DataFrame, one row per (metric, method)
    between: object  # pd.DataFrame, metric x metric Spearman, ordered by |rho| with humans
    combined: tuple[object, ...]  # SubsetResult, best first
    human_name: str
    level: str
    n_resamples: int
    seed: int
    ci_kendall: bool = True


@st.cache_data(show_spinner="Computing correlations…", max_entries=32)
def correlation_report(
    digest: str,
    keys: tuple[str, ...],
    tokenizer: str,
    human_name: str,
    level: str,
    n_resamples: int,
    seed: int,
    ci_kendall: bool,
    combined_on: str,
    *,
    _jset: object,
    _scores: object,
) -> CorrelationReport:
    """Correlations with bootstrap intervals (cached on disk), the Spearman heatmap and the
    combined metric over every subset of the metrics. The bootstrap draws a progress bar
    while it runs (created and removed here, so a cache hit shows nothing)."""
    import math

    from capeval_core.judgments.analysis import at_level, correlation_table, spearman_between
    from capeval_core.stats import rank_subsets

    human = _jset.human(human_name)
    values = {k: _scores.values[k] for k in _scores.keys}
    systems = _jset.systems() if level == "system" else None
    ci_methods = ("pearson", "spearman", "kendall_b", "kendall_c")
    bar = st.empty()

    def progress(done: float) -> None:
        bar.progress(
            min(max(done, 0.0), 1.0),
            text=f"Bootstrap intervals: {n_resamples:,} resamples ({done:.0%})",
        )

    table = correlation_table(
        human,
        values,
        ci_methods=ci_methods if ci_kendall else ("pearson", "spearman"),
        systems=systems,
        n_resamples=n_resamples,
        seed=seed,
        on_progress=progress,
    )
    bar.empty()
    spear = table[table["method"] == "spearman"].set_index("metric")["statistic"]
    order = sorted(values, key=lambda k: -abs(spear[k]) if math.isfinite(spear[k]) else math.inf)
    # at system level the heatmap and the combined metric use system means, like the table
    level_human, level_values = at_level(human, values, systems)
    combined = rank_subsets(level_human, level_values, combined_on) if values else ()
    return CorrelationReport(
        table,
        spearman_between(values, order, systems),
        combined,
        human_name,
        level,
        n_resamples,
        seed,
        ci_kendall,
    )


@st.cache_data(show_spinner="Running the Williams tests…", max_entries=32)
def williams(
    digest: str,
    keys: tuple[str, ...],
    tokenizer: str,
    human_name: str,
    correlation: str,
    alternative: str,
    *,
    _jset: object,
    _scores: object,
) -> object:
    """The Williams p-value matrix (``capeval_core.stats.williams_matrix``)."""
    from capeval_core.stats import williams_matrix

    values = {k: _scores.values[k] for k in _scores.keys}
    return williams_matrix(_jset.human(human_name), values, correlation, alternative)  # type: ignore[arg-type]


@st.cache_data(show_spinner=False, max_entries=64)
def williams_pair(
    digest: str,
    tokenizer: str,
    human_name: str,
    a: str,
    b: str,
    correlation: str,
    alternative: str,
    *,
    _jset: object,
    _scores: object,
) -> object:
    """The Williams test of metric ``a`` against ``b``, with r12, r13, r23 and |R|."""
    from capeval_core.stats import correlation_matrix, williams_test

    human = _jset.human(human_name)
    with_human, between = correlation_matrix(
        human, {a: _scores.values[a], b: _scores.values[b]}, correlation
    )
    return williams_test(with_human[a], with_human[b], between[0, 1], len(human), alternative)  # type: ignore[arg-type]


@st.cache_data(show_spinner=False, max_entries=64)
def pairwise_report(
    digest: str,
    keys: tuple[str, ...],
    tokenizer: str,
    n_references: int,
    draws: int,
    seed: int,
    metric_tie: str,
    human_tie: str,
    *,
    _jset: object,
    _scores: object,
) -> dict[str, object]:
    """Pairwise accuracy per metric (PASCAL-50S protocol knobs)."""
    from capeval_core.stats import pairwise_accuracy

    prefs, cats = _jset.preferences(), _jset.categories()
    return {
        k: pairwise_accuracy(
            _scores.values_a[k],
            _scores.values_b[k],
            prefs,
            cats,
            metric_tie=metric_tie,  # type: ignore[arg-type]
            human_tie=human_tie,  # type: ignore[arg-type]
            seed=seed,
        )
        for k in _scores.keys
    }


@st.cache_data(show_spinner=False, max_entries=64)
def forced_choice_report(
    digest: str,
    keys: tuple[str, ...],
    tokenizer: str,
    metric_tie: str,
    *,
    _jset: object,
    _scores: object,
) -> dict[str, object]:
    """Forced-choice accuracy per metric and distractor type; ``candidate_a`` is the correct
    caption (or the human-preferred one where the file says ``b``)."""
    import numpy as np

    from capeval_core.stats import forced_choice_accuracy

    prefs = _jset.preferences()
    cats = np.array([c or "distracted" for c in _jset.categories()], dtype=object)
    out = {}
    for k in _scores.keys:
        a, b = _scores.values_a[k][0], _scores.values_b[k][0]
        correct, distracted = np.where(prefs < 0, b, a), np.where(prefs < 0, a, b)
        groups = {c: distracted[cats == c] for c in dict.fromkeys(cats.tolist())}
        # one call per type: forced_choice_accuracy pairs each type with its own correct rows
        acc, n = {}, {}
        for c, d in groups.items():
            r = forced_choice_accuracy(correct[cats == c], {c: d}, metric_tie=metric_tie)  # type: ignore[arg-type]
            acc.update(r.accuracy)
            n.update(r.n)
        out[k] = (acc, n)
    return out


# -- perturbation lab (issue 8) ----------------------------------------------------------------
#: batch-mode datasets of the lab: label -> name ``capeval perturb --dataset`` also knows
LAB_DATASETS: dict[str, str] = {
    "COCO val2014 (first images)": "coco-val",
    "Synthetic graded demo (has human-like scores)": "demo-graded",
    "Judgment set loaded on the Judgments page": "loaded",
}


@st.cache_data(show_spinner=False, max_entries=128)
def lab_perturb_and_score(
    candidate: str,
    references: tuple[str, ...],
    names: tuple[str, ...],
    seed: int,
    n: int,
    keys: tuple[str, ...],
    tokenizer: str,
    cider_idf: str,
) -> tuple[tuple[object, ...], dict[str, str]]:
    """Apply each perturbation (``n`` edits where it takes ``n``) and score before/after in
    one call; returns the ``PerturbationScores`` and the metrics that failed (key -> why)."""
    from capeval_core import perturb as lab

    perturbations = []
    for name in names:
        opts = {"n": n} if "n" in lab.perturbation_spec(name).defaults else {}
        perturbations.append(lab.perturb(candidate, name, seed=seed, **opts))
    errors: dict = {}
    scores = lab.score_perturbations(
        perturbations,
        references,
        keys,
        tokenizer=tokenizer,
        options={"cider_d": {"idf": cider_idf}},
        errors=errors,
    )
    return scores, {k: str(e) for k, e in errors.items()}


@st.cache_data(show_spinner=False, max_entries=64)
def lab_table2(
    caption: str, seed: int, keys: tuple[str, ...], tokenizer: str, cider_idf: str
) -> tuple[object, dict[str, str]]:
    """The seed paper's Table 2 experiment on one caption (``capeval_core.perturb.table2``)."""
    from capeval_core import perturb as lab

    errors: dict = {}
    table = lab.table2(
        caption,
        keys,
        seed=seed,
        tokenizer=tokenizer,
        options={"cider_d": {"idf": cider_idf}},
        errors=errors,
    )
    return table, {k: str(e) for k, e in errors.items()}


@st.cache_data(show_spinner=False, max_entries=16)
def lab_batch(
    dataset: str,
    n_images: int,
    name: str,
    seed: int,
    keys: tuple[str, ...],
    tokenizer: str,
    loaded_digest: str = "",
    _loaded: object = None,
) -> object:
    """Batch mode: ``name`` applied to every candidate of a lab dataset (see LAB_DATASETS).

    For ``"loaded"``, ``_loaded`` is the graded JudgmentSet of the Judgments page (not hashed;
    ``loaded_digest``, its content digest, is the cache key); its first ``n_images`` rows are
    used, with its first human-score column.
    """
    from capeval_core import perturb as lab

    human = human_name = None
    if dataset == "loaded":
        jset = _loaded
        rows = min(n_images, len(jset))  # type: ignore[arg-type]
        cands, refs = jset.candidates[:rows], jset.references[:rows]  # type: ignore[attr-defined]
        human_name = jset.score_names[0]  # type: ignore[attr-defined]
        human = jset.human(human_name)[:rows]  # type: ignore[attr-defined]
        names = ", ".join(jset.source) or "uploaded file"  # type: ignore[attr-defined]
        source = f"the set loaded on the Judgments page ({names}; first {rows:,} candidates)"
    elif dataset == "coco-val":
        sets = resources.coco_caption_sets("val", n_images)
        cands, refs = [s.candidate for s in sets], [s.references for s in sets]
        source = f"COCO val2014, first {len(sets)} images"
    else:
        from capeval_core.judgments.demo import demo_graded

        jset = demo_graded(max(1, n_images // 5), seed=0)
        cands, refs = jset.candidates, jset.references
        human_name = jset.score_names[0]
        human = jset.human(human_name)
        source = f"synthetic graded demo ({len(jset)} candidates)"
    return lab.perturb_batch(
        cands,
        refs,
        name,
        keys,
        seed=seed,
        tokenizer=tokenizer,
        human=human,
        human_name=human_name,
        source=source,
        on_error="skip",
    )


# -- Systems page ------------------------------------------------------------------------------

#: what the Systems page compares when nothing is uploaded (clearly a demo)
SYSTEMS_DEMO_IMAGES = 200
SYSTEMS_DEFAULT_KEYS = ("bleu_4", "rouge_l", "cider_d")


@st.cache_resource(show_spinner="Reading COCO val2014 references…", max_entries=1)
def coco_val_references() -> object:
    """COCO val2014's references from the installed pycocoevalcap (read once, ~2 s)."""
    from capeval_core.systems import coco_val_references as read

    return read()


@st.cache_data(show_spinner="Reading and checking the results files…", max_entries=8)
def systems_input(
    results: tuple[tuple[str, bytes], ...],
    annotations: tuple[str, bytes] | None,
    split: str = "test",
    on_missing: str = "error",
) -> object:
    """Uploaded results files aligned on their images (``SystemsInput``); the references
    from an uploaded file (COCO annotations, ``{image_id: [captions]}`` or Karpathy's
    ``dataset_coco.json`` with ``split``), or COCO val2014. Raises InputError naming the file
    and the image ids when the files do not caption the same images once each (unless
    ``on_missing="intersect"``)."""
    from capeval_core.systems import load_systems

    refs = annotations if annotations is not None else coco_val_references()
    return load_systems(list(results), refs, split=split, on_missing=on_missing)  # type: ignore[arg-type]


@st.cache_data(show_spinner="Building the demo systems from COCO val2014…", max_entries=2)
def demo_systems_input(n_images: int = SYSTEMS_DEMO_IMAGES) -> object:
    """The demo: three synthetic systems on the first COCO val2014 images."""
    from capeval_core.systems import demo_systems

    return demo_systems(n_images)


@st.cache_resource(show_spinner=False, max_entries=8)
def systems_reference_set(digest: tuple[str, ...], tokenizer: str, *, _data: object) -> str:
    """The name of the systems' references as a CIDEr-D IDF source (registered once per
    process), so Compare captions scores one of their images as the table does."""
    from capeval_core.idf import register_reference_set
    from capeval_core.tokenize import get_tokenizer

    return register_reference_set(_data.references, get_tokenizer(tokenizer))  # type: ignore[attr-defined]


@st.cache_resource(show_spinner=False, max_entries=8)
def systems_comparison(
    digest: tuple[str, ...],
    keys: tuple[str, ...],
    tokenizer: str,
    paired: str,
    n_resamples: int,
    n_trials: int,
    seed: int,
    *,
    _data: object,
) -> object:
    """Every system of ``_data`` (a ``SystemsInput``; ``digest``, its systems' content
    digests, is the cache key) scored with ``keys`` (disk-cached per system too), with
    bootstrap intervals and paired tests against the first. A progress bar is shown while
    it runs and removed after, so a cache hit replays nothing visible."""
    import warnings

    from capeval_core.errors import DegenerateCorpusWarning
    from capeval_core.resources import available_cpus
    from capeval_core.systems import compare_systems, score_systems

    bar, progress = _progress_bar("Scoring the systems…")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateCorpusWarning)
        scores = score_systems(
            _data,  # type: ignore[arg-type]
            keys,
            tokenizer=tokenizer,
            workers=available_cpus(),  # used on large sets only
            on_progress=progress,
            on_error="skip",
        )
    bar.progress(1.0, text="Bootstrap resamples and paired tests…")
    comparison = compare_systems(
        scores, paired=paired, n_resamples=n_resamples, n_trials=n_trials, seed=seed
    )
    bar.empty()
    return comparison


@st.cache_data(show_spinner=False, max_entries=16)
def systems_per_item(
    digest: tuple[str, ...], resampling: str, fmt: str, *, _comparison: object
) -> str:
    """The per-image CSV or JSON of a comparison (``digest`` and ``resampling`` name it)."""
    from capeval_core.systems import per_item_text

    return per_item_text(_comparison, fmt)  # type: ignore[arg-type]
