"""The BLEU panel: clipped n-gram counts, precisions, brevity penalty."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from capeval_core.metrics import metric_class
from capeval_core.metrics.bleu import BleuDetails
from capeval_core.results import MetricResult, SegmentScore
from capeval_ui.views.common import (
    INTROS,
    TERMS,
    bar_chart,
    dataframe,
    explain,
    format_number,
    no_contest,
    order_radio,
    panel_columns,
    render_details,
    show_tokens,
    token_strip,
)

INTROS["bleu"] = (
    "BLEU counts how many of the candidate's word sequences (of 1 to 4 words) also appear in a "
    "reference, and lowers the score of a candidate shorter than the references."
)
TERMS["bleu"] = (
    ("n-gram", "a sequence of n consecutive words (a 2-gram: two words)"),
    (
        "clipped count",
        (
            "an n-gram counts at most as often as one reference has it, so repeating a word earns"
            " nothing"
        ),
    ),
    ("precision pₙ", "clipped matches / the candidate's n-grams, for order n"),
    (
        "brevity penalty (BP)",
        (
            "exp(1 − r/c) when the candidate (c words) is shorter than the reference length r, "
            "else 1"
        ),
    ),
)

#: BLEU's ``effective_length`` option, in words
REF_LENGTH = {
    "closest": "the reference length closest to c",
    "shortest": "the shortest reference",
    "average": "the mean reference length",
}


@render_details.register
def _bleu(details: BleuDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    orders = list(range(1, len(details.correct) + 1))
    labels = [f"{n}-gram" for n in orders]
    keys = [k for k in metric_class(result.key).report_keys() if k in segment.scores]
    precisions = list(details.precisions)
    st.markdown("**Modified n-gram precision** (clipped matches / candidate n-grams)")
    left, right = panel_columns([3, 2])
    with left:
        frame = pd.DataFrame(
            {
                "order": labels,
                "clipped matches": list(details.correct),
                "candidate n-grams": list(details.guess),
                "precision pₙ": precisions,
                "BLEU-n": [segment.scores[k] for k in keys],
            }
        )
        dataframe(
            frame,
            hide_index=True,
            width="stretch",
            numbers=["precision pₙ", "BLEU-n"],
            # short headers, the long names in their help: five columns fit half a page
            column_config={
                "order": st.column_config.Column("order", width="small"),
                "clipped matches": st.column_config.Column(
                    "matches", width="small", help="clipped matches"
                ),
                "candidate n-grams": st.column_config.Column(
                    "n-grams", width="small", help="the candidate's n-grams of this order"
                ),
                "precision pₙ": st.column_config.Column(
                    "pₙ", width="small", help="precision: clipped matches / n-grams"
                ),
                "BLEU-n": st.column_config.Column("BLEU-n", width="small"),
            },
        )
        bp = details.brevity_penalty
        c, r = details.candidate_length, details.reference_length
        if c < r:
            rule = "exp(1 − r/c), as c < r"
        elif c == r:  # coco-caption's guards against 0: (c + 1e-15) / (r + 1e-9) < 1
            rule = (
                "exp(1 − (r + 10⁻⁹) / (c + 10⁻¹⁵)), just under 1: coco-caption's BLEU adds "
                "these to c and r against a division by zero, so c = r is penalised too"
            )
        else:
            rule = "1, as c > r"
        mode = dict(result.signature.options).get("effective_length", "closest")
        st.markdown(
            f"**Brevity penalty** BP = **{format_number(bp)}** with candidate length c = {c} and "
            f"reference length r = {r:g} ({REF_LENGTH.get(mode, mode)}): BP = {rule}. "
            "BLEU-n = BP × geometric mean of p₁ … pₙ."
        )
    with right:
        bar_chart(
            labels,
            {"precision pₙ": precisions, "BLEU-n": [segment.scores[k] for k in keys]},
            "value",
            key=f"{key}-chart",
        )

    st.markdown("**Candidate n-grams and their clipped counts**")
    order = order_radio(orders, key)
    if order is None:  # only when the radio has no options
        return
    spans = details.matched_spans(order)
    covered = {i for start, end in spans for i in range(start, end)}
    st.caption(
        f"Highlighted: candidate tokens inside the {len(spans)} matched {order}-gram(s), "
        "counting each n-gram at most as often as one reference has it."
    )
    show_tokens(token_strip({"candidate": details.candidate}, {"candidate": covered}))
    grams = [g for g in details.ngrams if len(g.ngram) == order]
    grams.sort(key=lambda g: (-g.clipped, -g.count))
    table = pd.DataFrame(
        {
            "n-gram": [" ".join(g.ngram) for g in grams],
            "count in candidate": [g.count for g in grams],
            "max count in one reference": [g.max_ref_count for g in grams],
            "clipped count": [g.clipped for g in grams],
        }
    )
    dataframe(table, hide_index=True, width="stretch")


def _order(key: str, details: BleuDetails) -> int:
    """The n of ``bleu_n`` (all the orders counted for another key)."""
    return int(key.rsplit("_", 1)[1]) if key.rsplit("_", 1)[-1].isdigit() else len(details.correct)


@no_contest.register
def _bleu_floor(a: BleuDetails, b: BleuDetails, key: str) -> str:
    """Neither candidate matched any k-word sequence of a reference (k <= n; one too short
    to have any matches none): BLEU-n is then 0 for both (Papineni et al.'s geometric mean of
    the precisions), and pycocoevalcap's values differ only by its smoothing constants (a
    missing precision of 1e-15 / count, or 1e-6 with no k-word sequence at all), which rank
    them by length and lower orders, not by the words the order counts."""
    n = _order(key, a)
    both = [k + 1 for k in range(n) if a.correct[k] == 0 and b.correct[k] == 0]
    if not both:
        return ""
    k = both[0]
    none = [side for side, d in (("A", a), ("B", b)) if d.guess[k - 1] == 0]
    has_none = f" ({' and '.join(none)} {'has' if len(none) == 1 else 'have'} none)" if none else ""
    # the lowest order without a match, which reads as a typo beside BLEU-n unless it says why
    longer = f", so no {n}-word one either" if k < n else ""
    return (
        f"neither candidate matches a {k}-word sequence of a reference{has_none}{longer}: "
        f"BLEU-{n} is 0 "
        "for both, and the values differ by pycocoevalcap's smoothing constants alone, so "
        "neither is higher"
    )


@explain.register
def _bleu_why(a: BleuDetails, b: BleuDetails, key: str) -> str:
    n = _order(key, a)

    def counts(d: BleuDetails) -> str:
        return " ".join(f"{c}/{g}" for c, g in zip(d.correct[:n], d.guess[:n], strict=True))

    orders = "unigram matches" if n == 1 else f"n-gram matches, orders 1–{n}"
    return (
        f"clipped {orders}: A {counts(a)}, B {counts(b)}; "
        f"brevity penalty A {format_number(a.brevity_penalty)}, "
        f"B {format_number(b.brevity_penalty)}"
    )
