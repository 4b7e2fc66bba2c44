"""Property tests over what users hand capeval: the command line's JSON readers (any JSON
value, any unicode including lone surrogates, any nesting depth, any bytes) and every public
option of every registered metric. The only outcomes allowed are a result, or one line
that is a CapevalError (exit status 2 on the command line): never another exception."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import math
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from capeval_core import CapevalError, OptionError, UnknownKeyError
from capeval_core.cli import main
from capeval_core.files import Limits, lone_surrogate
from capeval_core.judgments import load_judgments
from capeval_core.metrics import METRICS
from capeval_core.metrics.base import UNLESS_DEFAULT

CORPUS = Path(__file__).resolve().parents[1] / "malformed" / "good"
FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# any unicode, lone surrogates included (JSON escapes them as \\udXXX; an escaped high and
# low surrogate side by side read back as one character)
surrogates = st.integers(0xD800, 0xDFFF).map(chr)
any_text = st.one_of(
    st.text(st.characters(), max_size=12),
    st.lists(st.one_of(st.characters(), surrogates), max_size=8).map("".join),
)
ids = st.one_of(st.integers(-3, 3), any_text, st.booleans(), st.none(), st.floats())
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    any_text,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(any_text, inner, max_size=4)
    ),
    max_leaves=12,
)
caption_records = st.lists(
    st.one_of(
        st.fixed_dictionaries({"image_id": st.sampled_from([1, 2]) | ids, "caption": any_text}),
        st.dictionaries(st.sampled_from(["image_id", "caption", "id", "x"]), json_values),
        json_values,
    ),
    max_size=4,
)


def _nested(depth: int, leaf: object) -> str:
    """JSON text nesting ``leaf`` ``depth`` levels deep in alternating arrays and objects
    (built as text: Python's own encoder stops at about 1,000 levels)."""
    opens = ["[" if k % 2 else '{"k": ' for k in range(depth)]
    closes = ["]" if k % 2 else "}" for k in reversed(range(depth))]
    return Deep("".join(opens) + _dump(leaf) + "".join(closes))


deep_texts = st.builds(_nested, st.integers(1, 3000), json_values)


def _dump(value: object) -> str:
    return value if isinstance(value, Deep) else json.dumps(value, ensure_ascii=True)


class Deep(str):
    """JSON text already (a deeply nested value), written as it is."""


def _score(results: Path, annotations: Path, out: Path) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    argv = ["score", "--results", str(results), "--annotations", str(annotations)]
    argv += ["--metrics", "rouge_l", "--per-item", str(out)]
    with (
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")  # e.g. degenerate corpora: not what is tested here
        code = main(argv)
    return code, stdout.getvalue(), stderr.getvalue()


def _assert_clean_outcome(code: int, err: str, named: Path, out: Path) -> None:
    event(f"exit status {code}")
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("capeval: error: ") and named.name in lines[0], err
        assert not out.exists()
        assert not list(out.parent.glob(f".{out.name}.*"))  # no temporary left either
    else:
        assert code == 0, err
        assert out.is_file()
        out.unlink()


@FUZZ
@given(content=st.one_of(caption_records.map(_dump), json_values.map(_dump), deep_texts))
def test_any_results_file(tmp_path_factory, content):
    tmp = tmp_path_factory.mktemp("results")
    results, out = tmp / "results.json", tmp / "items.csv"
    results.write_text(content, encoding="utf-8")
    code, _, err = _score(results, CORPUS / "captions.json", out)
    _assert_clean_outcome(code, err, results, out)


@FUZZ
@given(captions=st.tuples(any_text, any_text), suffix=st.sampled_from([".csv", ".json"]))
def test_any_caption_text(tmp_path_factory, captions, suffix):
    """Well-formed files with any caption text: scored and written whole, or (a lone
    surrogate) refused naming the record."""
    tmp = tmp_path_factory.mktemp("captions")
    results, out = tmp / "results.json", tmp / f"items{suffix}"
    records = [{"image_id": i + 1, "caption": c} for i, c in enumerate(captions)]
    results.write_text(_dump(records), encoding="utf-8")
    code, _, err = _score(results, CORPUS / "captions.json", out)
    read_back = [json.loads(json.dumps(c)) for c in captions]
    bad = [i for i, c in enumerate(read_back) if lone_surrogate(c) is not None]
    if bad:
        assert code == 2 and f"[{bad[0]}].caption" in err and "lone surrogate" in err, err
        assert not list(tmp.glob("items*")) and not list(tmp.glob(".items*"))
        return
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    if suffix == ".json":
        assert [r["image_id"] for r in json.loads(text)] == [1, 2]
    else:
        rows = list(csv.reader(io.StringIO(text)))
        assert rows[0] == ["image_id", "rouge_l"] and [r[0] for r in rows[1:]] == ["1", "2"]


@FUZZ
@given(
    annotations=st.one_of(
        st.fixed_dictionaries({"annotations": caption_records}),
        st.fixed_dictionaries(
            {
                "annotations": caption_records,
                "images": st.lists(
                    st.dictionaries(st.sampled_from(["id", "file"]), ids), max_size=3
                ),
            }
        ),
        json_values,
        deep_texts,
    )
)
def test_any_annotations_file(tmp_path_factory, annotations):
    tmp = tmp_path_factory.mktemp("annotations")
    path, out = tmp / "captions.json", tmp / "items.json"
    path.write_text(_dump(annotations), encoding="utf-8")
    code, _, err = _score(CORPUS / "results.json", path, out)
    _assert_clean_outcome(code, err, path, out)


@FUZZ
@given(data=st.binary(max_size=200))
def test_any_bytes_as_results_file(tmp_path_factory, data):
    tmp = tmp_path_factory.mktemp("bytes")
    results, out = tmp / "results.json", tmp / "items.csv"
    results.write_bytes(data)
    code, _, err = _score(results, CORPUS / "captions.json", out)
    _assert_clean_outcome(code, err, results, out)


graded_records = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {
                "candidate": any_text | json_values,
                "references": st.lists(any_text, max_size=3) | json_values,
                "score": st.integers(0, 5) | json_values,
            },
            optional={"image_id": ids, "id": ids | json_values, "system": json_values},
        ),
        json_values,
    ),
    max_size=4,
)


@FUZZ
@given(
    records=st.one_of(graded_records, json_values, deep_texts),
    suffix=st.sampled_from([".json", ".jsonl"]),
    fmt=st.sampled_from(["graded", "pairwise"]),
)
def test_any_json_judgment_file(tmp_path_factory, records, suffix, fmt):
    path = tmp_path_factory.mktemp("judgments") / f"j{suffix}"
    if suffix == ".jsonl" and isinstance(records, list):
        path.write_text("\n".join(_dump(r) for r in records) + "\n", encoding="utf-8")
    else:
        path.write_text(_dump(records), encoding="utf-8")
    try:
        jset = load_judgments(path, fmt)
    except CapevalError as exc:
        event("refused")
        message = str(exc)
        assert "\n" not in message and message.startswith(path.name), message
    else:
        event("loaded")
        assert len(jset) >= 1
        json.dumps([it.__dict__ for it in jset.items])  # every text is writable


# -- every public option -----------------------------------------------------------------------

junk = st.one_of(
    scalars,
    st.lists(st.floats(0, 1), min_size=0, max_size=5),
    st.tuples(*[st.floats(0, 1)] * 4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.sampled_from(
        [
            "corpus",
            "coco-val2014",
            "closest",
            "shortest",
            "average",
            "rank",
            "adq",
            "hter",
            "li",
            "tokens",
            "raw",
            "mean",
            "final",
            0.5,
            1,
            6.0,
            1e-200,
            1e200,
            -1.0,
        ]
    ),
)
CANDS = ["a man riding a horse on a beach", "a red bus"]
REFS = [["a person rides a horse along the shore"], ["a red double decker bus"]]
FIELDS = [(key, f.name) for key in sorted(METRICS) for f in dataclasses.fields(METRICS[key].Config)]


@pytest.mark.filterwarnings("ignore::capeval_core.DegenerateCorpusWarning")
@pytest.mark.filterwarnings("ignore::capeval_core.errors.ItemsLeftOutWarning")  # a 1-word limit
@pytest.mark.parametrize(("key", "option"), FIELDS, ids=[f"{k}-{o}" for k, o in FIELDS])
@settings(max_examples=25, deadline=None)
@given(value=junk)
def test_every_metric_option(key, option, value):
    try:
        metric = METRICS[key](**{option: value})
    except OptionError as exc:
        assert f"`{option}`" in str(exc) and "must be" in str(exc), str(exc)
        return
    result = metric.score(CANDS, REFS)
    lo, hi = metric.bounds
    scored = [seg for seg in result.segments if seg.missing is None]
    for k in metric.report_keys():
        if scored:
            assert math.isfinite(result.corpus[k]) and lo - 1e-9 <= result.corpus[k] <= hi + 1e-9
        for seg in result.segments:
            if seg.missing is not None:  # an item left out (a limit this value sets) says why
                assert math.isnan(seg.scores[k]) and seg.missing
                continue
            assert math.isfinite(seg.scores[k]) and lo - 1e-9 <= seg.scores[k] <= hi + 1e-9
    field = next(f for f in dataclasses.fields(metric.Config) if f.name == option)
    # an option added later stays out of the signature at its default (UNLESS_DEFAULT)
    at_default = (
        field.metadata == UNLESS_DEFAULT and getattr(metric.config, option) == field.default
    )
    assert (f"{option}:" in str(result.signature)) != at_default


@settings(max_examples=40, deadline=None)
@given(key=st.sampled_from(sorted(METRICS)), name=st.text(max_size=8), value=junk)
def test_unknown_options_and_tokenizers(key, name, value):
    fields = {f.name for f in dataclasses.fields(METRICS[key].Config)}
    if name in fields or name in ("tokenizer", "config", "embeddings", "encoder"):
        return
    with pytest.raises(OptionError, match="unknown option"):
        METRICS[key](**{name: value})
    if not isinstance(value, str):
        with pytest.raises(OptionError, match="`tokenizer`"):
            METRICS[key](tokenizer=value)
    elif value not in ("ptb", "whitespace"):
        with pytest.raises(UnknownKeyError, match="unknown tokenizer"):
            METRICS[key](tokenizer=value)


@settings(max_examples=40, deadline=None)
@given(
    option=st.sampled_from(["max_bytes", "max_caption_tokens", "max_references"]),
    value=st.one_of(scalars, st.integers(-5, 5)),
)
def test_limit_options(option, value):
    try:
        limits = Limits(**{option: value})
    except OptionError as exc:
        assert f"`{option}`" in str(exc)
    else:
        assert isinstance(value, int) and not isinstance(value, bool) and value >= 1
        assert getattr(limits, option) == value
