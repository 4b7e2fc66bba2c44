"""Every cached call the pages make.

All ``st.cache_data`` / ``st.cache_resource`` of the app live here (house style: pages stay
thin). Every cached function takes explicit hashable arguments, so the cache key is the
whole input and nothing is read from session state behind the caller's back. Each one reads
its arguments, makes one core call and returns it (with a progress bar where the call is
long); the logic lives in ``capeval_core``, the pages' wording in ``capeval_ui.choices``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from capeval_core import inventory as resource_inventory
from capeval_core import resources
from capeval_core.api import CaptionScores, score_caption
from capeval_core.inventory import ResourceInfo
from capeval_core.metrics import metric_class
from capeval_core.resources import CaptionSet
from capeval_ui.progress import long_work_bar, progress_bar

if TYPE_CHECKING:
    from capeval_core.judgments.analysis import CorrelationReport
    from capeval_core.stats import ForcedChoiceResult


@st.cache_data(show_spinner="Reading COCO val2014 captions…", max_entries=4)
def coco_examples(n: int) -> list[CaptionSet]:
    """The first ``n`` COCO val2014 images as candidate + references (the benchmark protocol)."""
    return resources.coco_caption_sets("val", n)


@st.cache_data(ttl=60, show_spinner=False)
def inventory() -> list[ResourceInfo]:
    """What capeval finds on this machine; re-read after a minute so installs show up."""
    return resource_inventory.inventory()


def _score(
    keys: tuple[str, ...],
    candidate: str,
    references: tuple[str, ...],
    tokenizer: str,
    cider_idf: str,
) -> CaptionScores:
    options = {"cider_d": {"idf": cider_idf}}
    with long_work_bar("SPICE"):  # the only metric whose work reports (a long caption's parse)
        return score_caption(keys, candidate, references, tokenizer=tokenizer, options=options)


#: the same scoring, cached on its whole input. The results are frozen, so every session
#: shares them as they are (``cache_resource``): a copy pickled into the cache and out again on
#: every rerun cost each edit a tenth of a second on a busy server, and made MEAN find its
#: nearest words while the page waited for its scores (issue 42's load goal)
_cached_scores = st.cache_resource(show_spinner=False, max_entries=256)(_score)


def score_captions(
    keys: tuple[str, ...],
    candidate: str,
    references: tuple[str, ...],
    tokenizer: str,
    cider_idf: str,
) -> CaptionScores:
    """Score one candidate against its references with every key
    (``capeval_core.api.score_caption``).

    Degenerate-input notes (CIDEr-D on one image) stay in ``MetricResult.warnings`` (the
    page shows them) instead of being printed to the server log on every rerun. A metric
    stopped by a missing resource is tried again on every call, outside the cache: the user
    may have provided the resource since (word vectors, a reinstalled package), and the
    same inputs must then score without a restart.
    """
    args = (candidate, references, tokenizer, cider_idf)
    scores = _cached_scores(keys, *args)
    retry = tuple(k for k in keys if metric_class(k).key in scores.missing)
    if not retry:
        return scores
    fresh = _score(retry, *args)
    results = {k: r for k in keys if (r := scores.results.get(k, fresh.results.get(k))) is not None}
    errors = {k: m for k, m in scores.errors.items() if k not in scores.missing}
    return CaptionScores(results, {**errors, **fresh.errors}, fresh.missing)


def clear_scores() -> None:
    """Forget every cached score of the Compare page (tests start from a cold cache)."""
    _cached_scores.clear()


# -- meta-evaluation (Judgments, Correlations, Significance, Pairwise accuracy, Robustness) -----
# The loaded JudgmentSet lives in st.session_state (``state.JSET_KEY``) and in
# ``capeval_ui.store``; cached functions take its content digest (hashable, the cache key) and
# the set itself as ``_jset`` (not hashed by Streamlit).

#: the pairwise knobs of the published PASCAL-50S protocol
PASCAL_REFERENCES, PASCAL_DRAWS = 5, 5


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


@st.cache_data(show_spinner="Reading the file…", max_entries=16)
def upload_columns(name: str, data: bytes) -> tuple[list[str], list[str]]:
    """``(columns, numeric columns)`` of an uploaded generic file, for the column mapping."""
    from capeval_core.judgments.uploads import uploaded_columns

    return uploaded_columns(name, data)


@st.cache_data(show_spinner="Reading and validating the judgments…", max_entries=8)
def load_upload(
    files: tuple[tuple[str, bytes], ...],
    fmt: str,
    preset: str | None,
    mapping: tuple[tuple[str, str], ...] = (),
    score_columns: tuple[str, ...] | None = None,
) -> object:
    """Uploaded judgment file(s) loaded with the registry loader ``fmt``
    (``capeval_core.judgments.uploads.load_uploaded``; ``mapping`` renames the columns of a
    generic file first). Raises ``JudgmentFormatError`` naming file, line and column."""
    from capeval_core.judgments.uploads import load_uploaded

    return load_uploaded(files, fmt, preset, mapping=mapping, score_columns=score_columns)


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

    bar, progress = progress_bar("Scoring the judgments…")

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
    combined metric over every subset of the metrics
    (``capeval_core.judgments.analysis.correlation_report``). The bootstrap draws a progress
    bar while it runs (created and removed here, so a cache hit shows nothing)."""
    from capeval_core.judgments.analysis import correlation_report as report

    bar = st.empty()

    def progress(done: float) -> None:
        bar.progress(
            min(max(done, 0.0), 1.0),
            text=f"Bootstrap intervals: {n_resamples:,} resamples ({done:.0%})",
        )

    result = report(
        _jset.human(human_name),
        {k: _scores.values[k] for k in _scores.keys},
        human_name=human_name,
        systems=_jset.systems() if level == "system" else None,
        n_resamples=n_resamples,
        seed=seed,
        ci_kendall=ci_kendall,
        combined_on=combined_on,
        on_progress=progress,
        groups=_jset.resampling_groups() if level == "item" else None,
    )
    bar.empty()
    return result


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
    """The Williams test of metric ``a`` against ``b``, with r12, r13, r23 and |R|
    (``capeval_core.stats.williams_between``)."""
    from capeval_core.stats import williams_between

    human = _jset.human(human_name)
    return williams_between(human, _scores.values[a], _scores.values[b], correlation, alternative)  # type: ignore[arg-type]


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
) -> dict[str, ForcedChoiceResult]:
    """Forced-choice accuracy per metric and distractor type
    (``capeval_core.stats.forced_choice_by_type``); ``candidate_a`` is the correct caption
    (or the human-preferred one where the file says ``b``)."""
    from capeval_core.stats import forced_choice_by_type

    prefs, cats = _jset.preferences(), _jset.categories()
    return {
        k: forced_choice_by_type(
            _scores.values_a[k][0],
            _scores.values_b[k][0],
            prefs,
            cats,
            metric_tie=metric_tie,  # type: ignore[arg-type]
        )
        for k in _scores.keys
    }


# -- perturbation lab (issue 8) ----------------------------------------------------------------
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
    """Apply each perturbation (``n`` edits where it takes ``n``) and score the caption and
    each perturbed one, each as a set of its own; returns the ``PerturbationScores`` and the
    metrics that failed (key -> why)."""
    from capeval_core import perturb as lab

    perturbations = lab.perturb_each(candidate, names, seed=seed, n=n)
    errors: dict = {}
    with long_work_bar("SPICE"):  # a paragraph caption's parse, once per perturbation
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
    with long_work_bar("SPICE"):
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
    """Batch mode: ``name`` applied to every candidate of a lab dataset
    (``capeval_core.perturb.batch_dataset``; ``choices.LAB_DATASETS`` names them).

    For ``"loaded"``, ``_loaded`` is the graded JudgmentSet of the Judgments page (not hashed;
    ``loaded_digest``, its content digest, is the cache key); its first ``n_images`` rows are
    used, with its first human-score column.
    """
    from capeval_core import perturb as lab

    data = lab.batch_dataset(
        dataset, n_images, jset=_loaded, described_as="the set loaded on the Judgments page"
    )
    return lab.perturb_batch(
        data.candidates,
        data.references,
        name,
        keys,
        seed=seed,
        tokenizer=tokenizer,
        human=data.human,
        human_name=data.human_name,
        source=data.source,
        on_error="skip",
        ids=data.ids,
    )


# -- Systems page ------------------------------------------------------------------------------

#: what the Systems page compares when nothing is uploaded (clearly a demo)
SYSTEMS_DEMO_IMAGES = 200


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
    ``dataset_coco.json`` with ``split``), or COCO val2014; a file name that comes again is
    numbered as a system name. Raises InputError naming the file
    and the image ids when the files do not caption the same images once each (unless
    ``on_missing="intersect"``)."""
    from capeval_core.systems import distinct_names, load_systems

    refs = annotations if annotations is not None else coco_val_references()
    names = distinct_names([name for name, _ in results])  # two models' results.json
    return load_systems(list(results), refs, names, split=split, on_missing=on_missing)  # type: ignore[arg-type]


@st.cache_data(show_spinner="Building the demo systems from COCO val2014…", max_entries=2)
def demo_systems_input(n_images: int = SYSTEMS_DEMO_IMAGES) -> object:
    """The demo: three synthetic systems on the first COCO val2014 images."""
    from capeval_core.systems import demo_systems

    return demo_systems(n_images)


@st.cache_resource(show_spinner=False, max_entries=8)
def systems_reference_set(digest: tuple[str, ...], tokenizer: str, *, _data: object) -> str:
    """The name of the systems' references as a CIDEr-D IDF source (registered once per
    process), so Compare captions scores one of their images as the table does."""
    from capeval_core.metrics.idf import register_reference_set
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
    it runs and removed after, so a cache hit replays nothing visible.

    The whole computation runs in a process of its own (``score_and_compare_apart``): this
    server's threads (every person's page) share one interpreter lock, and a Systems run's
    own Python work (tokenizing, collecting the workers' parts, resampling) queued behind
    them (issue 42's load goal). A Streamlit stop (the Cancel button, a closed tab) raised
    from the progress bar ends that process and its workers. A set too small for worker
    processes (the demo) is scored in this thread: a process would take longer to start."""
    from capeval_core.batch import MIN_PART
    from capeval_core.errors import DegenerateCorpusWarning
    from capeval_core.resources import available_cpus
    from capeval_core.systems import score_and_compare, score_and_compare_apart

    bar, progress = progress_bar("Scoring the systems…")
    run = score_and_compare_apart if len(_data) >= MIN_PART else score_and_compare  # type: ignore[arg-type]
    comparison = run(
        _data,  # type: ignore[arg-type]
        keys,
        tokenizer=tokenizer,
        workers=available_cpus(),  # used on large sets only
        on_error="skip",
        paired=paired,
        n_resamples=n_resamples,
        n_trials=n_trials,
        seed=seed,
        ignore=(DegenerateCorpusWarning,),
        on_progress=progress,
        on_stage=lambda text: bar.progress(1.0, text=text),
    )
    bar.empty()
    return comparison


@st.cache_data(show_spinner=False, max_entries=16)
def systems_per_item(request: object, references: str, fmt: str, *, _comparison: object) -> str:
    """The per-image CSV or JSON of a comparison, named by the page's ``Request`` (everything
    its numbers depend on) and the references' name (which the JSON quotes)."""
    from capeval_core.systems import per_item_text

    return per_item_text(_comparison, fmt)  # type: ignore[arg-type]
