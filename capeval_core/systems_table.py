"""A comparison of captioning systems as a paper prints it (issue 33).

Captioning papers report BLEU-1..4, METEOR, ROUGE-L, CIDEr-D and SPICE in that order, each
×100 with one decimal (CIDEr-D 120.1, not 1.2013). :func:`paper_table` lays a
:class:`~capeval_core.systems.SystemsComparison` out that way: per system each metric's
value ± half the width of its bootstrap interval, a † where the paired test against the
baseline gives p < 0.05, and below, per system but the baseline, Δ to the baseline with its
p-value. A p-value at the floor of the resampling (1,000 resamples cannot give less than
1/1,001) is written "< 0.001", as papers write it, never "0.0010". The table exports as
text, Markdown, LaTeX (booktabs) and CSV; ``raw=True`` keeps the metrics' own scale with
four decimals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from capeval_core.errors import InputError
from capeval_core.files import counted, printable, signed
from capeval_core.metrics import COCO_CAPTION_KEYS, metric_class
from capeval_core.systems import (
    ALPHA,
    SystemsComparison,
    categories_left_out,
    dropped_said,
    format_p,
    references_fields,
)

if TYPE_CHECKING:
    import pandas as pd

#: the order captioning papers print the metrics in; any other key follows, in its own order
PAPER_ORDER = COCO_CAPTION_KEYS
#: the table formats :meth:`PaperTable.render` writes
TABLE_FORMATS = ("text", "markdown", "latex", "csv")
DAGGER = "†"


def paper_order(keys: Sequence[str]) -> list[str]:
    """``keys`` in the papers' order, the others after them in their given order.

    >>> paper_order(["cider_d", "wmd", "bleu_4", "spice", "meteor"])
    ['bleu_4', 'meteor', 'cider_d', 'spice', 'wmd']
    """
    known = [k for k in PAPER_ORDER if k in keys]
    return known + [k for k in keys if k not in PAPER_ORDER]


@dataclass(frozen=True)
class PaperTable:
    """The formatted cells of a paper's results table, ready to export.

    ``values[s][m]``, ``half_widths[s][m]``, ``deltas[s][m]`` and ``p_values[s][m]`` are the
    printed texts of system ``s`` and metric ``m`` (the baseline's Δ and p are ``""``);
    ``significant[s][m]`` is whether p < 0.05; ``numbers`` holds the same values as numbers
    (scaled and rounded as printed) for the CSV; ``notes`` say how the table was made, and
    ``signatures`` (label, signature) per metric how each column's numbers were made: the text,
    Markdown and LaTeX give them under the notes, as a paper's footnote would.
    """

    keys: tuple[str, ...]
    labels: tuple[str, ...]
    systems: tuple[str, ...]
    baseline: str
    values: tuple[tuple[str, ...], ...]
    half_widths: tuple[tuple[str, ...], ...]
    deltas: tuple[tuple[str, ...], ...]
    p_values: tuple[tuple[str, ...], ...]
    significant: tuple[tuple[bool, ...], ...]
    numbers: tuple[dict[str, Any], ...]
    scale: float
    notes: tuple[str, ...]
    signatures: tuple[tuple[str, str], ...] = ()

    def _footer(self) -> list[str]:
        """The notes, then one line per metric's signature."""
        return [*self.notes, *(f"{label}: {sig}" for label, sig in self.signatures)]

    def cell(self, s: int, m: int) -> str:
        """``"75.2 ± 0.4"``, with † where p < 0.05."""
        half = self.half_widths[s][m]
        text = self.values[s][m] + (f" ± {half}" if half else "")
        return text + (DAGGER if self.significant[s][m] else "")

    def delta_cell(self, s: int, m: int) -> str:
        """``"+0.9 (< 0.001)"``; empty for the baseline."""
        if not self.deltas[s][m]:
            return ""
        return f"{self.deltas[s][m]} ({self.p_values[s][m]})"

    @property
    def others(self) -> list[int]:
        """The systems compared with the baseline (indices)."""
        return [i for i, s in enumerate(self.systems) if s != self.baseline]

    def _row_name(self, s: int) -> str:
        name = self.systems[s]
        return f"{name} (baseline)" if name == self.baseline else name

    def value_frame(self) -> pd.DataFrame:
        """One row per system, one column per metric: ``"75.2 ± 0.4†"``."""
        import pandas as pd

        rows = [
            {
                "system": self._row_name(s),
                **{lab: self.cell(s, m) for m, lab in enumerate(self.labels)},
            }
            for s in range(len(self.systems))
        ]
        return pd.DataFrame(rows, columns=["system", *self.labels])

    def delta_frame(self) -> pd.DataFrame:
        """One row per system, one column per metric: ``"+0.9 (< 0.001)"``, the baseline's
        cells empty."""
        import pandas as pd

        rows = [
            {
                "system": self._row_name(s),
                **{lab: self.delta_cell(s, m) for m, lab in enumerate(self.labels)},
            }
            for s in range(len(self.systems))
        ]
        return pd.DataFrame(rows, columns=["system", *self.labels])

    # -- exports ---------------------------------------------------------------------------

    def render(self, fmt: str) -> str:
        """The table as ``"text"``, ``"markdown"``, ``"latex"`` or ``"csv"``."""
        writers = {
            "text": self.to_text,
            "markdown": self.to_markdown,
            "latex": self.to_latex,
            "csv": self.to_csv,
        }
        if fmt not in writers:
            raise InputError(
                f"table format must be one of {', '.join(TABLE_FORMATS)} (got {fmt!r})"
            )
        return writers[fmt]()

    def _grid(self, name: Any) -> tuple[list[list[str]], list[str], list[list[str]]]:
        """(value rows, the Δ block's heading, Δ rows), system names through ``name``."""
        values = [
            [name(self._row_name(s)), *(self.cell(s, m) for m in range(len(self.keys)))]
            for s in range(len(self.systems))
        ]
        heading = f"Δ to {self.baseline} (p)"
        deltas = [
            [name(self.systems[s]), *(self.delta_cell(s, m) for m in range(len(self.keys)))]
            for s in self.others
        ]
        return values, [heading], deltas

    def to_text(self) -> str:
        """Fixed-width columns for a terminal; control characters in names escaped."""
        header = ["System", *self.labels]
        values, heading, deltas = self._grid(printable)
        heading = [printable(h) for h in heading]
        rows = [*values, *([[], heading, *deltas] if deltas else [])]
        widths = [max(len(r[j]) for r in [header, *rows] if len(r) > j) for j in range(len(header))]

        def line(cells: list[str]) -> str:
            padded = [
                c.ljust(w) if j == 0 else c.rjust(w)
                for j, (c, w) in enumerate(zip(cells, widths, strict=False))
            ]
            return "  ".join(padded).rstrip()

        rule = "-" * (sum(widths) + 2 * (len(widths) - 1))
        out = [line(header), rule, *(line(r) if r else rule for r in rows), rule]
        return "\n".join([*out, *map(printable, self._footer())]) + "\n"

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table; system names escaped."""
        values, heading, deltas = self._grid(_markdown_escape)
        head = ["System", *self.labels]
        out = [
            "| " + " | ".join(head) + " |",
            "| :--- | " + " | ".join("---:" for _ in self.labels) + " |",
        ]
        out += ["| " + " | ".join(r) + " |" for r in values]
        if deltas:
            blank = " |" * len(self.labels)
            out.append(f"| **{_markdown_escape(heading[0])}** |{blank}")
            out += ["| " + " | ".join(r) + " |" for r in deltas]
        out.append("")
        footer = [_markdown_escape(n) for n in self.notes] + [
            # a code span keeps a signature as it is copied (escaped, it read bleu\|tok...)
            f"{_markdown_escape(label)}: `{sig}`" if "`" not in sig else _markdown_escape(sig)
            for label, sig in self.signatures
        ]
        out += [n + "  " for n in footer[:-1]] + footer[-1:]
        return "\n".join(out) + "\n"

    def to_latex(self) -> str:
        """A ``tabular`` with booktabs rules (``\\usepackage{booktabs}``); the notes as
        comments above it, for the caption."""
        n = len(self.labels) + 1
        out = [f"% {_latex_comment(note)}" for note in self._footer()]
        out += [
            "\\begin{tabular}{l" + "r" * len(self.labels) + "}",
            "\\toprule",
            " & ".join(["System", *(_latex(lab) for lab in self.labels)]) + " \\\\",
            "\\midrule",
        ]
        for s in range(len(self.systems)):
            cells = [_latex(self._row_name(s))]
            for m in range(len(self.keys)):
                text = self.values[s][m]
                if text.startswith("-"):  # MEAN, I²CE: a minus sign, as in the Δ rows
                    text = "$-$" + text[1:]
                if self.half_widths[s][m]:
                    text += f" $\\pm$ {self.half_widths[s][m]}"
                if self.significant[s][m]:
                    text += "$^\\dagger$"
                cells.append(_latex(text, math_ok=True))
            out.append(" & ".join(cells) + " \\\\")
        if self.others:
            out += [
                "\\midrule",
                f"\\multicolumn{{{n}}}{{l}}{{$\\Delta$ to {_latex(self.baseline)} ($p$)}} \\\\",
            ]
            for s in self.others:
                cells = [_latex(self.systems[s])]
                for m in range(len(self.keys)):
                    p = self.p_values[s][m].replace("< ", "$<$ ")
                    delta = self.deltas[s][m]
                    if delta.startswith("-"):  # a minus sign, not a hyphen
                        delta = "$-$" + delta[1:]
                    cells.append(f"{delta} ({p})")
                out.append(" & ".join(cells) + " \\\\")
        out += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(out) + "\n"

    def to_csv(self) -> str:
        """One row per (system, metric): the value, interval and Δ as numbers (scaled and
        rounded like the table), the p-value as printed (a bound such as "< 0.001" is not a
        number) and whether it is significant; the baseline's Δ and p empty.
        Formula-safe and without comment lines (:func:`capeval_core.files.csv_text`)."""
        from capeval_core.files import csv_text

        header = list(self.numbers[0]) if self.numbers else ["system", "metric"]
        return csv_text(header, ([row[h] for h in header] for row in self.numbers))


def paper_table(comparison: SystemsComparison, *, raw: bool = False) -> PaperTable:
    """The paper's table of ``comparison`` (its baseline is the first system): metrics in
    :data:`PAPER_ORDER`, values ×100 with one decimal (``raw``: as the metrics give them,
    four decimals)."""
    scale, decimals = (1.0, 4) if raw else (100.0, 1)
    keys = paper_order(list(comparison.keys))
    labels = [metric_class(k).label(k) for k in keys]
    r = comparison.resampling
    resolution = {"bs": r.n_resamples, "ar": r.n_trials, "both": min(r.n_resamples, r.n_trials)}[
        r.paired
    ]

    def number(v: float, sign: bool = False) -> str:
        if not math.isfinite(v):
            return "n/a"
        if sign:  # a Δ that rounds to zero is +0.0, never -0.0
            return signed(v * scale, decimals)
        return f"{v * scale:.{decimals}f}"

    # one image: every resample is that image, so its "interval" (± 0.0) says nothing
    one = len(comparison.scores.input) == 1
    values, halves, deltas, ps, marks, numbers = [], [], [], [], [], []
    for s in comparison.systems:
        row_v, row_h, row_d, row_p, row_m = [], [], [], [], []
        for k, lab in zip(keys, labels, strict=True):
            low, high = comparison.ci[s][k]
            half = (high - low) / 2
            paired = comparison.paired[k].get(s) if s != comparison.baseline else None
            row_v.append(number(comparison.corpus[s][k]))
            row_h.append(number(half) if math.isfinite(half) and not one else "")
            row_d.append(number(paired.delta, sign=True) if paired else "")
            row_p.append(format_p(paired.p_value, resolution) if paired else "")
            tested = paired is not None and math.isfinite(paired.p_value)
            row_m.append(bool(tested and paired.p_value < ALPHA))
            numbers.append(
                {
                    "system": s,
                    "baseline": s == comparison.baseline,
                    "metric": lab,
                    "key": k,
                    "value": _rounded(comparison.corpus[s][k] * scale, decimals),
                    "ci_low": None if one else _rounded(low * scale, decimals),
                    "ci_high": None if one else _rounded(high * scale, decimals),
                    "delta": _rounded(paired.delta * scale, decimals) if paired else None,
                    "p": row_p[-1] if paired else None,
                    "significant": row_m[-1] if tested else None,  # None: no test
                }
            )
        values.append(tuple(row_v))
        halves.append(tuple(row_h))
        deltas.append(tuple(row_d))
        ps.append(tuple(row_p))
        marks.append(tuple(row_m))
    return PaperTable(
        tuple(keys),
        tuple(labels),
        tuple(comparison.systems),
        comparison.baseline,
        tuple(values),
        tuple(halves),
        tuple(deltas),
        tuple(ps),
        tuple(marks),
        tuple(numbers),
        scale,
        tuple(_notes(comparison, raw)),
        tuple((label, comparison.signature(k)) for k, label in zip(keys, labels, strict=True)),
    )


def _rounded(value: float, decimals: int) -> float | None:
    return round(value, decimals) + 0.0 if math.isfinite(value) else None  # + 0.0: no -0.0


def _notes(comparison: SystemsComparison, raw: bool) -> list[str]:
    r = comparison.resampling
    data = comparison.scores.input
    pct = f"{r.level * 100:g}%"
    scale = "as the metrics give them (four decimals)" if raw else "×100, one decimal"
    notes = [
        f"{counted(len(comparison.systems), 'system')} on {counted(len(data), 'image')}; "
        f"references: {_references(data)}.",
        f"Values {scale}; ± half the width of the {pct} bootstrap interval over the images "
        f"({r.n_resamples:,} resamples, seed {r.seed}).",
    ]
    if len(data) == 1:
        notes[1] = (
            f"Values {scale}; one image: no interval, and no paired test (every resample is "
            "that image)."
        )
    if len(comparison.systems) > 1:
        tests = {
            "bs": f"paired bootstrap resampling ({r.n_resamples:,} resamples; sacrebleu's p, "
            "which counts one tail)",
            "ar": f"approximate randomization ({r.n_trials:,} trials)",
            "both": f"the larger p of paired bootstrap resampling ({r.n_resamples:,} resamples) "
            f"and approximate randomization ({r.n_trials:,} trials)",
        }[r.paired]
        notes.append(
            f"Δ: system minus the baseline ({comparison.baseline}); "
            + (f"p: {tests}; {DAGGER} p < {ALPHA:g}." if len(data) > 1 else "no p (one image).")
        )
    undefined = categories_left_out(comparison)
    if undefined:
        counts = ", ".join(f"{metric_class(k).label(k)} {n:,}" for k, n in undefined.items())
        notes.append(
            "SPICE categories: the mean over the images whose references have such tuples "
            f"(as SPICE's summary); images left out: {counts}."
        )
    lost = [data.lost(i) for i in range(len(comparison.systems))]
    if any(lost):
        counts = "; ".join(
            f"{s}: {dropped_said(data, i)}"
            for i, (s, ids) in enumerate(zip(comparison.systems, lost, strict=True))
            if ids
        )
        notes.append(f"Scored on the images every system captions: {counts}.")
    left = comparison.left_out()
    if left:
        done = {}
        for k in left:
            metric = metric_class(k)
            label = metric.label(metric.primary_key())
            done.setdefault(label, comparison.n_compared(k))
        counts = ", ".join(
            f"{label} on {n:,} ({len(data) - n:,} left out)" for label, n in done.items()
        )
        notes.append(
            "Metrics that could not score some system's images compare every system on the "
            f"images all of them scored: {counts}."
        )
    return notes


def _references(data: Any) -> str:
    """The references as a shared table names them: the file name, no folders of this
    machine, and the digest of what was read (two files of one name stay apart)."""
    fields = references_fields(data)
    return f"{fields['references']} (sha256 {fields['references_sha256']})"


_MARKDOWN_SPECIAL = set("\\`*_[]<>|#~&$")  # & and $ too: an entity (&amp;) or $math$ stays text


def _markdown_escape(text: str) -> str:
    """Backslash before the characters that would make markup or break a table row.

    >>> _markdown_escape("a|b *c* <d>")
    'a\\\\|b \\\\*c\\\\* \\\\<d\\\\>'

    Control characters (a newline would end the table row, ESC starts a terminal sequence)
    are written as escapes first.
    """
    return "".join("\\" + c if c in _MARKDOWN_SPECIAL else c for c in printable(text))


_LATEX_SPECIAL = {
    "\\": "\\textbackslash{}",
    "&": "\\&",
    "%": "\\%",
    "$": "\\$",
    "#": "\\#",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
    "²": "\\textsuperscript{2}",
    "Δ": "$\\Delta$",
    "±": "$\\pm$",
    "†": "$^\\dagger$",
    "|": "\\textbar{}",
    "×": "$\\times$",
    "<": "$<$",
    ">": "$>$",
}


def _latex(text: str, math_ok: bool = False) -> str:
    """``text`` safe in a LaTeX table cell (``math_ok``: it holds capeval's own ``$...$``).

    >>> _latex("A&B_v2 50%"), _latex("I²CE"), _latex("[Ours] base")
    ('A\\\\&B\\\\_v2 50\\\\%', 'I\\\\textsuperscript{2}CE', '{}[Ours] base')
    """
    if math_ok:
        return text
    out = "".join(_LATEX_SPECIAL.get(c, c) for c in printable(text))
    # a row starts after \\ or \midrule, which read a leading [ as an option and * as
    # their starred form ("[Ours] base" stopped pdflatex; "*star" printed "star")
    return "{}" + out if out.startswith(("[", "*")) else out


def _latex_comment(text: str) -> str:
    """A note on a ``%`` line: no line breaks, and symbols spelt out where pdflatex has none."""
    text = " ".join(printable(text).split())
    for char, word in (("Δ", "Delta"), ("±", "+/-"), ("†", "dagger"), ("²", "2"), ("×", "x")):
        text = text.replace(char, word)
    return text


__all__ = [
    "PAPER_ORDER",
    "TABLE_FORMATS",
    "PaperTable",
    "categories_left_out",
    "format_p",
    "paper_order",
    "paper_table",
]
