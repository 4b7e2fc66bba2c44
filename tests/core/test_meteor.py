"""METEOR 1.5: golden files, the jar as oracle, stemmer agreement, bad input, details.

Reference: ``meteor-1.5.jar -l en -norm`` as pycocoevalcap 1.2 runs it (Java 17). The golden
files hold its statistics lines and scores; the slow tests drive the jar through
pycocoevalcap's own ``Meteor`` wrapper.
"""

from __future__ import annotations

import itertools
import math
import random
import shutil
import subprocess
import time

import pytest

from capeval_core.errors import DamagedCacheWarning
from capeval_core.metrics import get_metric
from capeval_core.metrics.meteor import (
    MODULES,
    Meteor,
    MeteorStats,
    aggregate_statistics,
    jar_inputs,
    normalize,
    score_statistics,
)
from tests.conftest import golden_coco200, golden_small, load_golden, requires_java

TOL = 1e-12


def _whitespace(**options) -> Meteor:
    return Meteor(tokenizer="whitespace", **options)


# -- (1) golden files ---------------------------------------------------------------------------


def test_golden_small_statistics_and_scores():
    cases = golden_small()
    result = _whitespace().score(
        [c["candidate_tok"] for c in cases], [c["references_tok"] for c in cases]
    )
    for case, seg in zip(cases, result.segments, strict=True):
        assert seg.details.stats.line() == case["meteor_stats"], case["name"]
        assert seg.value == pytest.approx(case["meteor"], abs=TOL), case["name"]
    corpus = load_golden("golden-small")["corpus"]["meteor"]
    assert result.value == pytest.approx(corpus, abs=TOL)


def test_golden_coco200_from_raw_captions():
    # raw captions through capeval's PTB emulation, as coco-caption does with the Java one
    items, cands, refs = golden_coco200()
    result = Meteor().score(cands, refs)
    lines = [seg.details.stats.line() for seg in result.segments]
    assert lines == [item["meteor_stats"] for item in items]
    for item, seg in zip(items, result.segments, strict=True):
        assert seg.value == pytest.approx(item["meteor"], abs=TOL)
    corpus = load_golden("coco200-scores")["corpus"]["meteor"]
    assert result.value == pytest.approx(corpus, abs=TOL)


def test_statistics_line_round_trip():
    line = golden_small()[2]["meteor_stats"]
    stats = MeteorStats.from_numbers([float(x) for x in line.split()])
    assert stats.line() == line
    assert MeteorStats.from_numbers(stats.as_tuple()) == stats


def test_corpus_sums_statistics_and_skips_chunks_of_perfect_items():
    perfect = MeteorStats(
        3, 3, 1, 1, (2, 0, 0, 0), (2, 0, 0, 0), (1, 0, 0, 0), (1, 0, 0, 0), 1, 3, 3
    )
    imperfect = MeteorStats(
        4, 5, 1, 2, (1, 0, 0, 0), (1, 0, 0, 0), (1, 0, 0, 0), (1, 0, 0, 0), 2, 2, 2
    )
    assert perfect.perfect and not imperfect.perfect
    total = aggregate_statistics([perfect, imperfect])
    assert total.chunks == 2  # the perfect item's chunk is not added (§5.8)
    assert (total.hyp_length, total.ref_length, total.matched_hyp) == (7, 8, 5)


def test_corpus_is_not_the_mean_of_segments():
    cases = golden_small()
    result = _whitespace().score(
        [c["candidate_tok"] for c in cases], [c["references_tok"] for c in cases]
    )
    mean = sum(result.segment_values()) / len(cases)
    assert abs(result.value - mean) > 1e-3
    assert result.details.score == result.value


# -- normalisation and the strings the jar sees ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a black-and-white t-shirt", ("a", "black", "and", "white", "t", "shirt")),
        ("a-b-c", ("a", "b-c")),  # non-overlapping replacement (§5.2 step 8)
        ("is n't it 's dog's", ("is", "n", "'t", "it", "'", "s", "dog", "'s")),
        ("u.s. e.g. mr. smith", ("us", "eg", "mr.", "smith")),
        ("end.", ("end", ".")),
        ("1,000 a,b", ("1,000", "a", ",", "b")),
        ("wait... what", ("wait", "...", "what")),
        ("", ()),
        ("Café ÜBER", ("café", "über")),
    ],
)
def test_normalize(text, words):
    assert normalize(text) == words


def test_jar_inputs_pipe_quirk():
    # pycocoevalcap removes "|||" from the hypothesis only; the jar splits the whole line on it
    hyp, refs = jar_inputs(("a|||b", "c"), [("x", "|||", "y"), ("z",)])
    assert hyp == "ab c"
    assert refs == ("x", "y", "z")


# -- configuration ------------------------------------------------------------------------------


def test_task_parameters_and_overrides_enter_the_signature():
    rank = get_metric("meteor")
    assert rank.config.parameters == (0.85, 0.2, 0.6, 0.75, (1.0, 0.6, 0.8, 0.6))
    adq = get_metric("meteor", task="adq")
    assert adq.config.parameters == (0.75, 1.4, 0.45, 0.7, (1.0, 1.0, 0.6, 0.8))
    custom = get_metric("meteor", alpha=0.9, weights=(1, 1, 1, 1))
    assert custom.config.gamma == 0.6 and custom.config.weights == (1.0, 1.0, 1.0, 1.0)
    sigs = {str(m.signature()) for m in (rank, adq, custom)}
    assert len(sigs) == 3
    assert "alpha:0.9" in str(custom.signature())
    assert "meteor-1.5 (pycocoevalcap" in str(rank.signature())


@pytest.mark.parametrize("options", [{"task": "fluency"}, {"alpha": 1.5}, {"weights": (1, 2)}])
def test_bad_options(options):
    with pytest.raises(ValueError):
        get_metric("meteor", **options)


def test_parameters_change_the_score():
    c, r = ["a kid sits on a couch"], [["a child is sitting on a sofa"]]
    values = {task: _whitespace(task=task).score(c, r).value for task in ("rank", "adq", "hter")}
    assert len(set(values.values())) == 3


# -- (4) bad input: defined results, no exceptions --------------------------------------------


@pytest.mark.parametrize("candidate", ["", "   ", "...", "!?!", ". , ; : -- ``''"])
def test_empty_or_punctuation_only_candidate(candidate):
    result = Meteor().score([candidate, "a cat"], [["a dog runs on the grass"], ["a cat"]])
    seg = result.segments[0]
    assert seg.value == 0.0
    assert seg.details.stats.matched_hyp == 0  # PTB keeps "!?!" as one token; it matches nothing
    assert result.segments[1].value > 0.9
    assert 0 < result.value < 1


@pytest.mark.parametrize("reference", ["", "...", "!!"])
def test_empty_reference(reference):
    result = Meteor().score(["a dog runs"], [[reference]])
    assert result.value == 0.0
    assert result.segments[0].details.stats.matched_ref == 0


def test_empty_against_empty_is_zero():
    result = Meteor().score([""], [[""]])
    assert result.value == 0.0 and result.segments[0].value == 0.0


def test_pipes_inside_captions():
    # With the PTB tokenizer "|||" becomes "| | |" and never reaches the jar's splitter.
    ptb = Meteor().score(["a dog ||| runs"], [["a dog ||| a cat"]]).segments[0].details
    assert ptb.hyp_tokens == ("a", "dog", "|", "|", "|", "runs")
    assert len(ptb.alignments) == 1
    # Pre-tokenized text keeps it: like the jar, the reference becomes two references and the
    # hypothesis loses its "|||" (pycocoevalcap's cleaning). Checked against the jar in
    # test_odd_inputs_agree_with_the_jar.
    ws = _whitespace().score(["a ||| dog"], [["a dog ||| a cat runs"]]).segments[0].details
    assert ws.hypothesis == "a dog"
    assert [a.reference for a in ws.alignments] == ["a dog", "a cat runs"]
    assert ws.best == 0 and ws.score > 0.9


def test_ten_thousand_words():
    words = ("a man rides a brown horse along the sandy beach at sunset " * 1000).split()
    long_caption = " ".join(words[:10_000])
    start = time.perf_counter()
    result = Meteor().score(
        [long_caption, "a cat"], [["a man riding a horse on a beach"], ["a cat"]]
    )
    assert time.perf_counter() - start < 60
    seg = result.segments[0]
    assert seg.details.stats.hyp_length == 10_000
    assert 0 < seg.value < 0.01


def test_non_ascii():
    result = Meteor().score(
        ["Un café très chaud — «délicieux»", "naïve ελληνικά 中文 😀"],
        [["un café chaud sur une table"], ["naive ελληνικά 中文"]],
    )
    assert all(0 < v < 1 for v in result.segment_values())
    # characters outside METEOR's letter classes are split off one by one (§5.2 step 2)
    assert "中" in result.segments[1].details.hyp_tokens


# -- (5) the details are consistent with the numbers -----------------------------------------


def _check_alignment(a, hyp_tokens, parameters):
    stats = a.stats
    alpha, beta, gamma, delta, weights = parameters
    covered_h: set[int] = set()
    covered_r: set[int] = set()
    for m in a.alignment:
        hs, rs = set(range(m.hyp_start, m.hyp_end)), set(range(m.ref_start, m.ref_end))
        assert not hs & covered_h and not rs & covered_r  # one-to-one
        covered_h |= hs
        covered_r |= rs
        assert m in a.candidates[m.module]
    assert set(a.fixed) <= set(a.alignment)
    assert len(covered_h) == stats.matched_hyp and len(covered_r) == stats.matched_ref
    # chunks partition the alignment into runs contiguous on both sides
    assert len(a.chunks) == stats.chunks
    assert [m for chunk in a.chunks for m in chunk] == list(a.alignment)
    for chunk in a.chunks:
        for x, y in itertools.pairwise(chunk):
            assert (x.ref_end, x.hyp_end) == (y.ref_start, y.hyp_start)
    # function/content split per module
    for k in range(len(MODULES)):
        mods = [m for m in a.alignment if m.module == k]
        hyp_words = [j for m in mods for j in range(m.hyp_start, m.hyp_end)]
        ref_words = [i for m in mods for i in range(m.ref_start, m.ref_end)]
        assert stats.function_hyp[k] == sum(a.hyp_function[j] for j in hyp_words)
        assert stats.content_hyp[k] == len(hyp_words) - stats.function_hyp[k]
        assert stats.function_ref[k] == sum(a.ref_function[i] for i in ref_words)
        assert stats.content_ref[k] == len(ref_words) - stats.function_ref[k]
    assert stats.hyp_length == len(hyp_tokens) and stats.ref_length == len(a.ref_tokens)
    # the score's arithmetic (§5.7)
    if stats.matched_hyp:
        lw_h = delta * (stats.hyp_length - stats.hyp_function_words) + (1 - delta) * sum(
            a.hyp_function
        )
        mw_h = sum(
            w * (delta * c + (1 - delta) * f)
            for w, c, f in zip(weights, stats.content_hyp, stats.function_hyp, strict=True)
        )
        assert a.precision == pytest.approx(mw_h / lw_h)
        assert a.fmean == pytest.approx(
            a.precision * a.recall / (alpha * a.precision + (1 - alpha) * a.recall)
        )
        assert a.penalty == pytest.approx(gamma * a.fragmentation**beta)
        assert a.score == pytest.approx(max(0.0, a.fmean * (1 - a.penalty)))
    else:
        assert a.score == 0.0


def test_details_are_consistent():
    cases = golden_small()
    metric = _whitespace()
    result = metric.score([c["candidate_tok"] for c in cases], [c["references_tok"] for c in cases])
    _, cands, refs = golden_coco200()
    result2 = Meteor().score(cands[:60], refs[:60])
    for seg in [*result.segments, *result2.segments]:
        d = seg.details
        for a in d.alignments:
            _check_alignment(a, d.hyp_tokens, metric.config.parameters)
        scores = d.reference_scores
        assert d.best == scores.index(max(scores))  # the first of the best
        assert seg.value == d.score == max(scores)


def test_ful_words_get_no_base_form():
    # measured with the jar (pycocoevalcap 1.2): "wonderful"/"beautiful" are paraphrases but
    # not synonyms, although WordNet has a word "ful" (see MeteorSynsets.morph)
    from capeval_core.meteor_resources import meteor_synsets

    syn = meteor_synsets()
    assert syn.morph("wonderful") == "" and syn.morph("cupsful") == ""
    assert not syn.synsets_of("wonderful") & syn.synsets_of("beautiful")
    line = _whitespace().score(["x wonderful"], [["x beautiful"]]).segments[0].details.stats
    jar = "2.0 2.0 0.0 0.0 1.0 1.0 0.0 0.0 " + "0.0 " * 8 + "1.0 1.0 0.0 0.0 1.0 2.0 2.0"
    assert line.line() == jar


def test_synonym_and_paraphrase_evidence():
    d = _whitespace().score(["a kid is sitting on a couch"], [["a child sits on a sofa"]])
    a = d.segments[0].details.winner
    modules = {(m.module_name, m.hyp_start, m.ref_start) for m in a.alignment}
    assert ("synonym", 1, 1) in modules  # kid / child
    assert ("paraphrase", 2, 2) in modules  # is sitting / sits
    para = next(m for m in a.alignment if m.module_name == "paraphrase")
    assert (para.hyp_len, para.ref_len) == (2, 1)
    assert a.stats.chunks == 1


def test_score_statistics_edge_cases():
    params = Meteor().config.parameters
    empty = MeteorStats(0, 0, 0, 0, (0,) * 4, (0,) * 4, (0,) * 4, (0,) * 4, 0, 0, 0)
    assert score_statistics(empty, params).score == 0.0
    assert math.isnan(score_statistics(empty, params).precision)


# -- (2) the jar itself, through pycocoevalcap ------------------------------------------------

N_ORACLE = 5000

#: Segments where capeval's statistics line differs from the jar's, with the reason.
#: Empty: none are known.
KNOWN_DIFFERENCES: dict[int, str] = {}


class _Jar:
    """pycocoevalcap's ``Meteor`` wrapper, recording the statistics line of every image."""

    def __init__(self) -> None:
        from pycocoevalcap.meteor.meteor import Meteor as JarMeteor

        class Recording(JarMeteor):
            def _stat(self, hypothesis_str, reference_list):
                line = super()._stat(hypothesis_str, reference_list)
                self.lines.append(line)
                return line

        self.jar = Recording()

    def score(self, hyps: list[str], refs: list[list[str]]):
        self.jar.lines = []
        gts = {i: r for i, r in enumerate(refs)}
        res = {i: [h] for i, h in enumerate(hyps)}
        corpus, items = self.jar.compute_score(gts, res)
        return corpus, items, list(self.jar.lines)


@pytest.fixture(scope="module")
def jar():
    return _Jar()


@pytest.mark.slow
@requires_java
def test_matches_the_jar_on_coco(jar):
    from capeval_core.metrics import make_batch
    from capeval_core.resources import coco_caption_sets

    sets = coco_caption_sets("val", N_ORACLE)
    rng = random.Random(2014)
    cands = []
    for i, s in enumerate(sets):  # a third get the candidate of another image
        other = rng.randrange(len(sets))
        cands.append(sets[other].candidate if i % 3 == 2 and other != i else s.candidate)
    metric = Meteor()
    batch = make_batch(cands, [s.references for s in sets], metric.tokenizer)
    ours = metric.score_batch(batch)
    corpus, items, lines = jar.score(
        [" ".join(t) for t in batch.candidate_tokens],
        [[" ".join(r) for r in refs] for refs in batch.reference_tokens],
    )
    differ = {
        i: (seg.details.stats.line(), line)
        for i, (seg, line) in enumerate(zip(ours.segments, lines, strict=True))
        if seg.details.stats.line() != line
    }
    assert set(differ) == set(KNOWN_DIFFERENCES), differ
    worst = max(abs(a - b) for a, b in zip(ours.segment_values(), items, strict=True))
    assert worst < TOL
    assert abs(ours.value - corpus) < 1e-9


ODD_INPUTS = [
    ("", ["a dog runs"]),
    ("a dog", [""]),
    ("", [""]),
    ("a ||| dog", ["a dog ||| a cat runs"]),
    ("a dog", ["|||"]),
    ("a|||dog", ["a dog|||"]),
    ("café très chaud «délicieux»", ["un café chaud"]),
    ("naïve résumé ελληνικά 中文 😀", ["naive resume ελληνικά 中文"]),
    (
        "u.s. army e.g. no. 5 mr. smith . .. ... a-b-c don't 90's `` '' \" , 1,000 a,b",
        ["us army eg no . 5 mr smith"],
    ),
    ("the dog 's ball -lrb- red -rrb- is n't here", ["the dog's ball (red) isn't here"]),
    ("a\u00a0dog\u2003runs", ["a dog runs"]),
    ("–– — ‘quoted’ “double” a–b", ["quoted double a b"]),
    ("x wonderful", ["x beautiful"]),
    ("x cupsful", ["x cupful"]),
    (" ".join(("a man rides a horse on the beach " * 1300).split()[:10_000]), ["a man on a horse"]),
]


@pytest.mark.slow
@requires_java
def test_odd_inputs_agree_with_the_jar(jar):
    # whitespace tokens go to the jar unchanged, so this exercises the jar's own splitting
    # and normalisation on text PTB would never produce
    hyps = [h for h, _ in ODD_INPUTS]
    refs = [r for _, r in ODD_INPUTS]
    ours = _whitespace().score(hyps, refs)
    corpus, items, lines = jar.score(hyps, refs)
    assert [s.details.stats.line() for s in ours.segments] == lines
    assert ours.segment_values() == pytest.approx(items, abs=TOL)
    assert ours.value == pytest.approx(corpus, abs=1e-9)


# -- (3) the stemmer ----------------------------------------------------------------------------

_STEMMER_SOURCE = """
import java.io.*;
import java.nio.charset.StandardCharsets;
import org.tartarus.snowball.ext.englishStemmer;

public class StemWords {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(
            new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        englishStemmer stemmer = new englishStemmer();
        String line;
        while ((line = in.readLine()) != null) {
            stemmer.setCurrent(line);
            stemmer.stem();
            out.println(stemmer.getCurrent());
        }
        out.flush();
    }
}
"""


@pytest.mark.slow
@requires_java
@pytest.mark.skipif(shutil.which("javac") is None, reason="needs javac to call the jar's stemmer")
def test_stemmer_agrees_with_the_jar_on_coco_vocabulary(tmp_path):
    """The jar's own Snowball stemmer class, called through its public Snowball API by a
    five-line Java program compiled here, against NLTK's EnglishStemmer (§5.4)."""
    from capeval_core.meteor_resources import meteor_jar
    from capeval_core.metrics.meteor import _stem
    from capeval_core.resources import coco_captions

    raw = set()
    for split in ("val", "train"):
        for cap in coco_captions(split):
            raw.update(cap.caption.split())
    vocab = {w for token in raw for w in normalize(token)}  # the words METEOR would compare
    words = sorted(w for w in vocab if "\n" not in w and "\r" not in w)
    jar = str(meteor_jar())
    (tmp_path / "StemWords.java").write_text(_STEMMER_SOURCE)
    subprocess.run(["javac", "-cp", jar, "StemWords.java"], cwd=tmp_path, check=True)
    out = subprocess.run(
        ["java", "-cp", f"{jar}:{tmp_path}", "StemWords"],
        input="\n".join(words) + "\n",
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    ).stdout.split("\n")[: len(words)]
    differ = {w: (j, _stem(w)) for w, j in zip(words, out, strict=True) if _stem(w) != j}
    assert len(words) > 25_000
    assert differ == {}, f"{len(differ)} of {len(words)} word types differ"


def test_synonym_tables_are_cached_and_survive_a_corrupt_cache(tmp_path, monkeypatch):
    """The parsed synonym tables are written to the cache once, read back equal, and a
    damaged cache file is rebuilt from the jar instead of failing."""
    from capeval_core import meteor_resources as mr

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path))
    built = mr.meteor_synsets.__wrapped__()
    (path,) = tmp_path.glob("meteor-synsets-v*.checked-pickle")
    cached = mr.meteor_synsets.__wrapped__()
    assert cached.synsets == built.synsets and cached.exceptions == built.exceptions
    assert cached.synsets_of("kid") & cached.synsets_of("child")
    good = path.read_bytes()
    for damaged in (b"not a pickle", good[: len(good) // 2], good[:-1] + bytes([good[-1] ^ 1])):
        path.write_bytes(damaged)
        with pytest.warns(DamagedCacheWarning, match="synonym cache"):
            again = mr.meteor_synsets.__wrapped__()
        assert again.synsets == built.synsets and again.exceptions == built.exceptions
        assert path.read_bytes() == good  # rewritten
