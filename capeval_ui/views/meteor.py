"""The METEOR panel: the alignment drawn, chunks, and the arithmetic."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from capeval_core.metrics.meteor import MODULES, MeteorAlignment, MeteorDetails
from capeval_core.results import MetricResult, SegmentScore
from capeval_ui.formats import format_count
from capeval_ui.views.common import (
    BLUE,
    GREEN,
    INTROS,
    ORANGE,
    TERMS,
    bracket_note,
    dataframe,
    explain,
    format_number,
    panel_columns,
    plot_text,
    reference_picker,
    render_details,
)

INTROS["meteor"] = (
    "METEOR lines up the candidate's words with a reference's (the same word, the same stem, a "
    "synonym or a paraphrase) and rewards matches that stay together in order."
)
TERMS["meteor"] = (
    (
        "module",
        "how two words matched: exact, stem, synonym (WordNet) or paraphrase (METEOR's table)",
    ),
    (
        "chunk",
        (
            "a run of matches adjacent and in the same order on both sides; fewer chunks, smaller"
            " penalty"
        ),
    ),
    ("Fmean", "a recall-weighted harmonic mean of precision and recall (α = 0.85)"),
    (
        "fragmentation, penalty",
        "chunks / matched words, and γ·Frag^β: how scattered the matches are",
    ),
    (
        "the jar's statistics",
        (
            "the 23 numbers the METEOR 1.5 Java program prints for a pair; capeval's equal them "
            "line for line"
        ),
    ),
)

# -- METEOR ---------------------------------------------------------------------------------------
#: line colour per METEOR module (exact, stem, synonym, paraphrase)
MODULE_COLOURS = dict(zip(MODULES, (BLUE, ORANGE, GREEN, "#9467bd"), strict=True))
_UNMATCHED = "#8c8c8c"
_HYP_Y, _REF_Y = 1.0, 0.0


def _positions(tokens: Sequence[str]) -> list[float]:
    """x centre of each token in a row, spaced by its length so long words do not overlap."""
    out, x = [], 0.0
    for token in tokens:
        width = max(len(token), 2) + 2.0
        out.append(x + width / 2)
        x += width
    return out


def _span(xs: Sequence[float], tokens: Sequence[str], start: int, end: int) -> tuple[float, float]:
    """Left and right edge (x) of tokens ``start .. end - 1`` of a row."""
    left = xs[start] - (max(len(tokens[start]), 2) + 1.0) / 2
    right = xs[end - 1] + (max(len(tokens[end - 1]), 2) + 1.0) / 2
    return left, right


def meteor_alignment_figure(details: MeteorDetails, reference: int) -> go.Figure:
    """Hypothesis over one reference (tokens as METEOR normalised them), a line per aligned
    span coloured by its module, and a dashed box around each chunk on both rows.

    Traces: two token rows of text (matched and unmatched words, per row), then exactly one
    ``lines`` trace per match of the alignment; shapes: two rectangles per chunk.
    """
    alignment = details.alignments[reference]
    hyp, ref = details.hyp_tokens, alignment.ref_tokens
    hx, rx = _positions(hyp), _positions(ref)
    # centre the shorter row under the longer one
    width_h = _span(hx, hyp, 0, len(hyp))[1] if hyp else 0.0
    width_r = _span(rx, ref, 0, len(ref))[1] if ref else 0.0
    shift_h, shift_r = max(0.0, (width_r - width_h) / 2), max(0.0, (width_h - width_r) / 2)
    hx = [x + shift_h for x in hx]
    rx = [x + shift_r for x in rx]
    hyp_module = {
        i: m.module_name for m in alignment.alignment for i in range(m.hyp_start, m.hyp_end)
    }
    ref_module = {
        j: m.module_name for m in alignment.alignment for j in range(m.ref_start, m.ref_end)
    }

    fig = go.Figure()
    rows = (
        ("hypothesis", hyp, hx, _HYP_Y, hyp_module, alignment.hyp_function),
        (f"reference #{reference + 1}", ref, rx, _REF_Y, ref_module, alignment.ref_function),
    )
    for row, tokens, xs, y, modules, function in rows:
        for matched in (True, False):
            idx = [i for i in range(len(tokens)) if (i in modules) == matched]
            if not idx:
                continue
            fig.add_scatter(
                x=[xs[i] for i in idx],
                y=[y] * len(idx),
                mode="text",
                text=[plot_text(tokens[i]) for i in idx],
                textposition="middle center",
                textfont={
                    "size": 16,
                    "color": [MODULE_COLOURS[modules[i]] for i in idx] if matched else _UNMATCHED,
                },
                hovertext=[
                    f"{row} word {i + 1}: {plot_text(tokens[i])}<br>"
                    f"{'function' if function[i] else 'content'} word; "
                    + (f"matched ({modules[i]})" if matched else "not matched")
                    for i in idx
                ],
                hoverinfo="text",
                showlegend=False,
                name=f"{row} ({'matched' if matched else 'unmatched'})",
            )
    seen: set[str] = set()
    gap = 0.17  # where lines start and end, away from the text
    for m in alignment.alignment:
        name = m.module_name
        h_left, h_right = _span(hx, hyp, m.hyp_start, m.hyp_end)
        r_left, r_right = _span(rx, ref, m.ref_start, m.ref_end)
        h_mid = (hx[m.hyp_start] + hx[m.hyp_end - 1]) / 2
        r_mid = (rx[m.ref_start] + rx[m.ref_end - 1]) / 2
        xs: list[float | None] = [h_mid, r_mid]
        ys: list[float | None] = [_HYP_Y - gap, _REF_Y + gap]
        if m.hyp_len > 1:  # a bracket under a multi-word span
            xs += [None, h_left + 0.5, h_right - 0.5]
            ys += [None, _HYP_Y - gap, _HYP_Y - gap]
        if m.ref_len > 1:
            xs += [None, r_left + 0.5, r_right - 0.5]
            ys += [None, _REF_Y + gap, _REF_Y + gap]
        words_h = plot_text(" ".join(hyp[m.hyp_start : m.hyp_end]))
        words_r = plot_text(" ".join(ref[m.ref_start : m.ref_end]))
        fig.add_scatter(
            x=xs,
            y=ys,
            mode="lines",
            line={"color": MODULE_COLOURS[name], "width": 3},
            name=name,
            legendgroup=name,
            showlegend=name not in seen,
            hovertext=f"{name}: {words_h} → {words_r}",
            hoverinfo="text",
        )
        seen.add(name)
    for chunk in alignment.chunks:
        first, last = chunk[0], chunk[-1]
        for xs, tokens, start, end, y in (
            (hx, hyp, first.hyp_start, last.hyp_end, _HYP_Y),
            (rx, ref, first.ref_start, last.ref_end, _REF_Y),
        ):
            left, right = _span(xs, tokens, start, end)
            fig.add_shape(
                type="rect",
                x0=left,
                x1=right,
                y0=y - 0.12,
                y1=y + 0.12,
                line={"color": _UNMATCHED, "width": 1.5, "dash": "dot"},
                fillcolor="rgba(140, 140, 140, 0.08)",
                layer="below",
            )
    span = max(width_h, width_r, 1.0)
    fig.update_layout(
        height=260,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        xaxis={"visible": False, "range": [-0.5, span + 0.5], "fixedrange": True},
        yaxis={
            "range": [-0.35, 1.35],
            "fixedrange": True,
            "tickvals": [_REF_Y, _HYP_Y],
            "ticktext": [f"reference #{reference + 1}", "hypothesis"],
            "showgrid": False,
            "zeroline": False,
        },
        legend={"orientation": "h", "y": 1.18, "x": 0, "title": {"text": "module"}},
        showlegend=True,
    )
    return fig


def _meteor_arithmetic(alignment: MeteorAlignment, options: Mapping[str, Any]) -> str:
    """METEOR's formulas (metric-spec §5.7) with this pair's numbers filled in."""
    alpha, beta, gamma, delta = (float(options[k]) for k in ("alpha", "beta", "gamma", "delta"))
    weights = tuple(float(w) for w in options["weights"])
    s = alignment.stats
    content_h = s.hyp_length - s.hyp_function_words
    content_r = s.ref_length - s.ref_function_words
    lw_h = delta * content_h + (1 - delta) * s.hyp_function_words
    lw_r = delta * content_r + (1 - delta) * s.ref_function_words
    mw_h = sum(
        w * (delta * c + (1 - delta) * f)
        for w, c, f in zip(weights, s.content_hyp, s.function_hyp, strict=True)
    )
    mw_r = sum(
        w * (delta * c + (1 - delta) * f)
        for w, c, f in zip(weights, s.content_ref, s.function_ref, strict=True)
    )
    w_text = ", ".join(f"{n} {w:g}" for n, w in zip(MODULES, weights, strict=True))
    if s.perfect:
        frag = "Frag  = 0   (every word matched in one chunk)"
    else:
        frag = (
            f"Frag  = chunks / mean matched = {s.chunks} / (({s.matched_hyp} + "
            f"{s.matched_ref}) / 2) = {alignment.fragmentation:.4f}"
        )
    lines = [
        f"parameters: α = {alpha:g}, β = {beta:g}, γ = {gamma:g}, δ = {delta:g}; "
        f"module weights: {w_text}",
        "",
        f"hypothesis: {s.hyp_length} words ({content_h} content, {s.hyp_function_words} function)"
        f" -> weighted length δ·{content_h} + (1−δ)·{s.hyp_function_words} = {lw_h:.4f}",
        f"reference:  {s.ref_length} words ({content_r} content, {s.ref_function_words} function)"
        f" -> weighted length δ·{content_r} + (1−δ)·{s.ref_function_words} = {lw_r:.4f}",
        f"matched, weighted Σ w_m·(δ·content + (1−δ)·function): hypothesis {mw_h:.4f}, "
        f"reference {mw_r:.4f}",
        "",
        f"P     = {mw_h:.4f} / {lw_h:.4f} = {alignment.precision:.4f}",
        f"R     = {mw_r:.4f} / {lw_r:.4f} = {alignment.recall:.4f}",
        f"Fmean = P·R / (α·P + (1−α)·R) = {alignment.fmean:.4f}",
        frag,
        f"Pen   = γ·Frag^β = {gamma:g} × {alignment.fragmentation:.4f}^{beta:g} = "
        f"{alignment.penalty:.4f}",
        f"score = Fmean·(1 − Pen) = {alignment.fmean:.4f} × (1 − {alignment.penalty:.4f}) = "
        f"{alignment.score:.4f}",
    ]
    if math.isnan(alignment.fmean * (1 - alignment.penalty)):
        lines.append("        (0/0 where nothing matched: the jar scores it 0)")
    return "\n".join(lines)


@render_details.register
def _meteor(details: MeteorDetails, segment: SegmentScore, result: MetricResult, key: str) -> None:
    options = dict(result.signature.options)
    best = details.best
    n_refs = len(details.alignments)
    if not n_refs:
        st.info("No reference to align with.")
        return
    st.markdown(
        f"**METEOR = {format_number(segment.value)}**: the best of the {n_refs} reference "
        "alignments "
        f"(reference #{best + 1} wins; ties go to the first)."
    )
    texts = (tuple(details.hyp_tokens), tuple(tuple(a.ref_tokens) for a in details.alignments))
    chosen = reference_picker(n_refs, best, "winning reference", texts, key=key)
    if chosen is None:
        return
    alignment = details.alignments[chosen]
    st.markdown("**Alignment** (words as METEOR sees them after its normalisation)")
    st.plotly_chart(
        meteor_alignment_figure(details, chosen), key=f"{key}-alignment", width="stretch"
    )
    bracket_note(details.hyp_tokens, alignment.ref_tokens)
    st.caption(
        f"{len(alignment.alignment)} aligned span(s) in {len(alignment.chunks)} chunk(s) "
        "(dotted boxes: runs of matches that are adjacent and in the same order on both "
        "sides); grey words are unmatched. Hover a word or a line for details."
    )
    left, right = panel_columns(2)
    with left:
        st.markdown("**The arithmetic**")
        st.code(_meteor_arithmetic(alignment, options), language=None, wrap_lines=True)
    with right:
        st.markdown("**Matched words per module**")
        s = alignment.stats
        counts = {
            "weight w_m": [float(w) for w in options["weights"]],
            "hypothesis, content": list(s.content_hyp),
            "hypothesis, function": list(s.function_hyp),
            "reference, content": list(s.content_ref),
            "reference, function": list(s.function_ref),
        }
        frame = pd.DataFrame.from_dict(counts, orient="index", columns=list(MODULES))
        # one float row above four count rows: every cell read as a float (3.0, 1.0)
        rows = pd.IndexSlice
        styled = frame.style.format("{:g}", subset=rows[["weight w_m"], :]).format(
            format_count, subset=rows[list(counts)[1:], :]
        )
        dataframe(styled, width="stretch")
        with st.expander("For researchers: the jar's 23 statistics for this pair"):
            st.caption(
                "The numbers the METEOR 1.5 Java program prints for this pair (its "
                "`-stats` line); capeval's are the same, line for line."
            )
            st.code(s.line(), language=None, wrap_lines=True)

    st.markdown("**Per reference**")
    table = pd.DataFrame(
        {
            "reference": [f"#{i + 1}" + (" (winner)" if i == best else "") for i in range(n_refs)],
            "normalised text": [" ".join(a.ref_tokens) for a in details.alignments],
            "matches": [len(a.alignment) for a in details.alignments],
            "chunks": [len(a.chunks) for a in details.alignments],
            "P": [a.precision for a in details.alignments],
            "R": [a.recall for a in details.alignments],
            "Fmean": [a.fmean for a in details.alignments],
            "Frag": [a.fragmentation for a in details.alignments],
            "Pen": [a.penalty for a in details.alignments],
            "score": [a.score for a in details.alignments],
        }
    )
    number_cols = ("P", "R", "Fmean", "Frag", "Pen", "score")
    dataframe(
        table,
        hide_index=True,
        width="stretch",
        numbers=number_cols,
        # a short header: a grid never wraps one, and a candidate's half of a tab is narrow
        column_config={
            "normalised text": st.column_config.TextColumn(
                "text", help="the reference as METEOR normalises it"
            )
        },
    )
    with st.expander(f"Every candidate match the four matchers found for reference #{chosen + 1}"):
        chosen_set = set(alignment.alignment)
        fixed = set(alignment.fixed)
        hyp, ref = details.hyp_tokens, alignment.ref_tokens
        rows = [
            {
                "module": m.module_name,
                "hypothesis words": " ".join(hyp[m.hyp_start : m.hyp_end]),
                "hypothesis position": m.hyp_start + 1,
                "reference words": " ".join(ref[m.ref_start : m.ref_end]),
                "reference position": m.ref_start + 1,
                "pre-selected": m in fixed,
                "in the alignment": m in chosen_set,
            }
            for matches in alignment.candidates
            for m in matches
        ]
        dataframe(
            pd.DataFrame(
                rows,
                columns=[
                    "module",
                    "hypothesis words",
                    "hypothesis position",
                    "reference words",
                    "reference position",
                    "pre-selected",
                    "in the alignment",
                ],
            ),
            hide_index=True,
            width="stretch",
        )
        st.caption(
            "Matches are generated module by module (exact, stem, synonym, paraphrase); "
            "unambiguous ones are pre-selected, then a beam search picks the alignment with "
            "the most matched words and the fewest chunks."
        )


@explain.register
def _meteor_why(a: MeteorDetails, b: MeteorDetails, key: str) -> str:
    def best(d: MeteorDetails) -> str:
        if not d.alignments:
            return "no reference"
        al = d.alignments[d.best]
        s = al.stats
        return (
            f"{s.matched_hyp} of {s.hyp_length} words aligned in {s.chunks} chunk(s) "
            f"(Fmean {format_number(al.fmean)}, "
            f"fragmentation penalty {format_number(al.penalty)})"
        )

    return f"best alignment: A {best(a)}; B {best(b)}"
