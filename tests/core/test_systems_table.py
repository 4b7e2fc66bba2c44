"""A paper's results table from a systems comparison (issue 33): order, scale, p floors,
markers, empty baseline cells, and the LaTeX and Markdown exports against golden files."""

from __future__ import annotations

import dataclasses
import io
import math
import os
from pathlib import Path

import pandas as pd
import pytest

from capeval_core.stats.resampling import PairedResult
from capeval_core.systems import (
    ResamplingSignature,
    SystemsComparison,
    SystemsInput,
    SystemsScores,
)
from capeval_core.systems_table import PAPER_ORDER, format_p, paper_order, paper_table

GOLDEN = Path(__file__).parents[1] / "golden"
#: the metrics in selection order, not the papers'
KEYS = ("cider_d", "bleu_4", "spice", "wmd", "bleu_1", "meteor", "rouge_l")
FLOOR = 1 / 1001  # the smallest p of 1,000 resamples


def fixed_comparison(dropped: bool = False) -> SystemsComparison:
    """A hand-made comparison of three systems on 50 images (numbers chosen, not scored):
    "Base" the baseline; "A&B_v2" better everywhere, at the floor of the resampling on
    CIDEr-D; "small|model" worse, p = 0.0321 on BLEU-4 (marked), 0.2 elsewhere."""
    n = 50
    names = ("Base", "A&B_v2", "small|model")
    data = SystemsInput(
        names,
        tuple(range(n)),
        tuple(("a caption",) * n for _ in names),
        (("a reference",),) * n,
        ("base.json", "ab.json", "small.json"),
        "a fixed test input",
        (),
        ((), (), (48, 49)) if dropped else (),
    )
    base = {
        "bleu_1": 0.7521,
        "bleu_4": 0.3312,
        "meteor": 0.2705,
        "rouge_l": 0.5499,
        "cider_d": 1.1234,
        "spice": 0.2049,
        "wmd": 0.1789,
    }
    shift = {"Base": 0.0, "A&B_v2": 0.0213, "small|model": -0.0071}
    corpus = {s: {k: v + shift[s] for k, v in base.items()} for s in names}
    ci = {s: {k: (v - 0.004, v + 0.0046) for k, v in corpus[s].items()} for s in names}
    paired = {k: {} for k in KEYS}
    for k in KEYS:
        p_ab = FLOOR if k == "cider_d" else 0.0012
        paired[k]["A&B_v2"] = PairedResult(0.0213, (0.01, 0.03), FLOOR, p_ab)
        p_small = 0.0321 if k == "bleu_4" else 0.2
        paired[k]["small|model"] = PairedResult(-0.0071, (-0.02, 0.001), p_small, p_small)
    scores = SystemsScores(data, KEYS, corpus, {}, {}, {k: f"{k}|fixed" for k in KEYS})
    mean = {s: dict(corpus[s]) for s in names}
    return SystemsComparison(
        scores, ci, mean, paired, ResamplingSignature("both", 1000, 10000, 12345, 0.95)
    )


def test_metrics_in_the_papers_order_then_the_others():
    shown = ["bleu_1", "bleu_4", "meteor", "rouge_l", "cider_d", "spice", "wmd"]
    assert paper_order(list(KEYS)) == shown
    assert paper_order([*reversed(PAPER_ORDER), "mean"]) == [*PAPER_ORDER, "mean"]
    assert paper_order(["wmd", "mean", "cider_d"]) == ["cider_d", "wmd", "mean"]


@pytest.mark.parametrize(
    ("p", "resolution", "shown"),
    [
        (1 / 1001, 1000, "< 0.001"),
        (1 / 10001, 10000, "< 0.001"),
        (0.0004, 10000, "< 0.001"),
        (1 / 201, 200, "< 0.005"),
        (2 / 201, 200, "0.010"),
        (0.0321, 1000, "0.032"),
        (1.0, 1000, "1.000"),
        (math.nan, 1000, "n/a"),
    ],
)
def test_p_values_as_papers_print_them(p, resolution, shown):
    assert format_p(p, resolution) == shown


def test_cells_scaled_marked_and_the_baselines_left_empty():
    table = paper_table(fixed_comparison())
    assert table.labels == (
        "BLEU-1", "BLEU-4", "METEOR", "ROUGE-L", "CIDEr-D", "SPICE", "WMD"
    )  # fmt: skip
    cider = table.keys.index("cider_d")
    assert table.cell(0, cider) == "112.3 ± 0.4"  # x100, one decimal
    assert table.cell(1, cider) == "114.5 ± 0.4†"
    assert table.delta_cell(1, cider) == "+2.1 (< 0.001)"  # never "0.0010"
    bleu4 = table.keys.index("bleu_4")
    assert table.delta_cell(2, bleu4) == "-0.7 (0.032)" and table.significant[2][bleu4]
    assert table.delta_cell(2, cider) == "-0.7 (0.200)" and not table.significant[2][cider]
    deltas = table.delta_frame()
    assert deltas.iloc[0].tolist() == ["Base (baseline)", *[""] * len(KEYS)]  # empty, not None
    assert "None" not in table.to_text() + table.to_markdown() + table.to_latex()
    raw = paper_table(fixed_comparison(), raw=True)
    assert raw.cell(0, cider) == "1.1234 ± 0.0043"
    assert raw.delta_cell(1, cider) == "+0.0213 (< 0.001)"


def test_csv_reads_back_with_pandas():
    table = paper_table(fixed_comparison())
    frame = pd.read_csv(io.StringIO(table.to_csv()))
    assert len(frame) == 3 * len(KEYS)
    base = frame[frame["system"] == "Base"]
    assert base["delta"].isna().all() and base["p"].isna().all()
    row = frame[(frame["system"] == "A&B_v2") & (frame["key"] == "cider_d")].iloc[0]
    assert row["value"] == 114.5 and row["delta"] == 2.1 and row["p"] == "< 0.001"
    assert bool(row["significant"])
    assert (row["ci_low"], row["ci_high"]) == (114.1, 114.9)  # rounded like the table


def test_left_out_images_are_said():
    """ "left out: small|model 2" read as small|model lacking two images, where it had them
    and the other systems did not: now said for what it is."""
    notes = paper_table(fixed_comparison(dropped=True)).notes
    assert notes[-1] == (
        "Scored on the images every system captions: small|model: 2 images dropped (not "
        "captioned by Base or A&B_v2)."
    )


# The golden files were produced from fixed_comparison() with
#   CAPEVAL_WRITE_GOLDEN=1 python -m pytest tests/core/test_systems_table.py -k golden
# and checked by eye: the metrics in the papers' order, values x100 with one decimal, the
# system names escaped ("A\&B\_v2", "small\textbar{}model"; Markdown "small\|model"),
# † on A&B_v2 everywhere and on small|model's BLEU-4 only, "< 0.001" for CIDEr-D's floor,
# no Δ row for the baseline; the Markdown renders as a table (GitHub preview) and the LaTeX
# uses booktabs rules only (no LaTeX install here: not compiled).
@pytest.mark.parametrize(
    ("fmt", "name"), [("latex", "systems-table.tex"), ("markdown", "systems-table.md")]
)
def test_golden_tables(fmt, name):
    text = paper_table(fixed_comparison()).render(fmt)
    path = GOLDEN / name
    if os.environ.get("CAPEVAL_WRITE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_a_p_just_below_alpha_is_not_printed_as_alpha():
    """50/1001 = 0.04995 was printed "0.050" beside its † (the legend: † p < 0.05)."""
    from capeval_core.systems import ALPHA, format_p

    for p in (50 / 1001, 0.049995, 0.04999999):
        printed = format_p(p, 1000)
        assert float(printed) < ALPHA, printed
    assert format_p(0.05, 1000) == "0.050" and format_p(0.0321, 1000) == "0.032"


def test_latex_names_starting_with_a_bracket_or_star_are_protected():
    """After \\\\ a leading [ is read as an option ("[Ours] base" stopped pdflatex) and * as
    the starred form ("*star" printed "star")."""
    from capeval_core.systems_table import _latex

    assert _latex("[Ours] base") == "{}[Ours] base"
    assert _latex("*star") == "{}*star"
    assert _latex("base [v2]") == "base [v2]"


def test_a_paired_bootstrap_tables_note_says_its_p_counts_one_tail():
    """With --paired bs a † in the paper's table was a one-sided test without a word."""
    import dataclasses

    from capeval_core.systems import ResamplingSignature

    comparison = fixed_comparison()
    for paired, said in (("bs", True), ("ar", False), ("both", False)):
        signature = ResamplingSignature(paired, 1000, 10000, 12345, 0.95)
        notes = paper_table(dataclasses.replace(comparison, resampling=signature)).notes
        assert any("counts one tail" in n for n in notes) is said, paired


def test_a_delta_that_rounds_to_zero_is_printed_plus_zero():
    """A Δ of -5.6e-05 printed -0.0 (LaTeX $-$0.0, CSV -0.0) where a paper's table, and the
    text report beside it, give +0.0."""
    comparison = fixed_comparison()
    base = comparison.baseline
    other = next(s for s in comparison.systems if s != base)
    paired = comparison.paired["bleu_4"][other]
    tiny = dataclasses.replace(paired, delta=-5.6e-05)
    nearly = dataclasses.replace(
        comparison,
        paired={**comparison.paired, "bleu_4": {**comparison.paired["bleu_4"], other: tiny}},
    )
    table = paper_table(nearly)
    s, m = table.systems.index(other), table.keys.index("bleu_4")
    assert table.deltas[s][m] == "+0.0"
    assert "$-$0.0" not in table.render("latex") and "-0.0," not in table.render("csv")


def test_a_pair_with_no_test_is_not_called_insignificant():
    """Two systems sharing one image: no paired test (p NaN, "n/a"), where the CSV said
    significant=False; and a one-image table printed "± 0.0", an interval of no width."""
    comparison = fixed_comparison()
    data = dataclasses.replace(
        comparison.scores.input,
        image_ids=(0,),
        candidates=tuple(c[:1] for c in comparison.scores.input.candidates),
        references=comparison.scores.input.references[:1],
    )
    untested = {
        k: {s: dataclasses.replace(r, p_bootstrap=math.nan, p_randomization=math.nan)
            for s, r in per.items()}
        for k, per in comparison.paired.items()
    }  # fmt: skip
    one = dataclasses.replace(
        comparison, scores=dataclasses.replace(comparison.scores, input=data), paired=untested
    )
    table = paper_table(one)
    frame = pd.read_csv(io.StringIO(table.to_csv()), keep_default_na=False, dtype=str)
    others = frame[frame["system"] != "Base"]
    assert (others["significant"] == "").all() and (others["p"] == "n/a").all()
    assert (frame["ci_low"] == "").all() and (frame["ci_high"] == "").all()
    assert "±" not in table.render("markdown").split("\n\n")[0]
    assert "one image: no interval, and no paired test" in table.notes[1]
    assert table.notes[2] == "Δ: system minus the baseline (Base); no p (one image)."
    assert "± half the width" in paper_table(comparison).notes[1]  # fifty images: as before


def test_the_signatures_of_a_table_keep_its_notes_and_the_images_dropped():
    """The app's CSV table and its signatures file did not say the scale, the images or that
    a system's images were dropped (the Markdown and LaTeX say it under the table)."""
    import json

    from capeval_core.systems import comparison_signatures_text

    comparison = fixed_comparison(dropped=True)
    table = paper_table(comparison)
    sidecar = json.loads(comparison_signatures_text(comparison, "t.csv", table.notes))
    assert sidecar["notes"] == list(table.notes) and "×100" in sidecar["notes"][1]
    assert sidecar["dropped"]["small|model"] == {"n": 2, "image_ids": [48, 49]}
    plain = json.loads(comparison_signatures_text(fixed_comparison(), "t.csv"))
    assert "notes" not in plain and "dropped" not in plain


def test_a_negative_value_is_a_minus_sign_in_latex_as_a_negative_delta_is():
    """MEAN and I²CE range from -1 to 1: a negative corpus value was written with a hyphen
    ("-3.2"), where the Δ rows write $-$."""
    comparison = fixed_comparison()
    corpus = {s: {k: (-v if k == "wmd" else v) for k, v in c.items()} for s, c in
              comparison.scores.corpus.items()}  # fmt: skip
    negative = dataclasses.replace(
        comparison, scores=dataclasses.replace(comparison.scores, corpus=corpus)
    )
    latex = paper_table(negative).render("latex")
    assert "$-$17.9 $\\pm$ 0.4" in latex and " -17.9" not in latex


def test_markdown_keeps_an_entity_and_dollars_in_a_name_as_text():
    """ "R&amp;D" rendered as "R&D", and "$x$" as math on GitHub (the golden table's "A&B_v2"
    is written "A\\&B\\_v2")."""
    from capeval_core.systems_table import _markdown_escape

    assert _markdown_escape("R&amp;D $x$") == "R\\&amp;D \\$x\\$"
