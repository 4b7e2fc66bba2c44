"""METEOR's shipped paraphrase index (``capeval_core/data/meteor_paraphrase.npz``).

Reference: the index capeval builds from ``meteor/data/paraphrase-en.gz`` as pycocoevalcap
1.2 installs it (itself checked entry by entry against a plain reading of the table in
``test_meteor.py``); the shipped file is written by ``python -m tools.meteor_paraphrase_index``.
"""

from __future__ import annotations

import gzip
import shutil
import zlib

import numpy as np
import pytest

from tests.core.test_meteor import ODD_TABLE, _table_entries
from tools.meteor_paraphrase_index import same_index


@pytest.fixture
def cold_cache(tmp_path, monkeypatch):
    """An empty user cache and no index opened or being built in this process."""
    from capeval_core import meteor_resources as mr

    monkeypatch.setenv("CAPEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(mr, "_INDEX", None)
    monkeypatch.setattr(mr, "_BUILD", None)
    yield mr
    mr._INDEX = None  # the next test opens the real index again
    shutil.rmtree(tmp_path / "cache", ignore_errors=True)  # 180 MB: not kept among pytest's tmp


def test_coding_round_trips_an_odd_table(tmp_path):
    """Unsorted keys, repeated entries, a carriage return, invalid UTF-8, non-BMP text and a
    truncated last entry: the coded index expands to exactly the index built from the table."""
    from capeval_core import meteor_shipped
    from capeval_core.meteor_resources import ParaphraseIndex, _index_arrays

    table = tmp_path / "paraphrase-en.gz"
    table.write_bytes(gzip.compress(ODD_TABLE))
    built = _index_arrays(table)
    path = tmp_path / "shipped.npz"
    meteor_shipped.write(path, meteor_shipped.encode(*built))
    decoded = meteor_shipped.decode(path)
    assert same_index(built, decoded) == []
    index = ParaphraseIndex.in_memory(tmp_path / "odd.idx", *decoded)
    for key, targets in _table_entries(ODD_TABLE).items():
        assert list(index.lookup(key)) == targets, key
    assert index.lookup("is") == () and index.max_words == 3


def test_comparison_sees_a_changed_entry(tmp_path):
    """``same_index`` (what the tool and the slow test rely on) fails on one changed entry."""
    from capeval_core import meteor_shipped
    from capeval_core.meteor_resources import _index_arrays

    table = tmp_path / "paraphrase-en.gz"
    table.write_bytes(gzip.compress(ODD_TABLE))
    other = tmp_path / "other.gz"
    other.write_bytes(gzip.compress(ODD_TABLE.replace(b"\nsits\n", b"\nsat\n")))
    built = _index_arrays(table)
    path = tmp_path / "shipped.npz"
    meteor_shipped.write(path, meteor_shipped.encode(*_index_arrays(other)))
    assert "phrase 2 texts" in same_index(built, meteor_shipped.decode(path))


def test_shipped_index_is_of_the_installed_table():
    """The file names the table pycocoevalcap 1.2 installs (content stamp), so a first run
    uses it; its counts are the table's (430,639 phrases 1, 5,274,084 entries)."""
    from capeval_core import meteor_shipped
    from capeval_core.meteor_resources import paraphrase_table, table_stamp

    path = meteor_shipped.shipped_path()
    meta = meteor_shipped.shipped_meta(path)
    assert meta["source_stamp"] == table_stamp(paraphrase_table())
    assert (meta["n_keys"], meta["n_entries"], meta["max_words"]) == (430_639, 5_274_084, 7)
    assert meta["format"] == meteor_shipped.SHIPPED_FORMAT
    assert path.stat().st_size < 20e6  # compact: it ships in the package


def _first_entries(megabytes: int) -> dict[str, list[str]]:
    """Phrase 1 -> phrases 2 of the first keys of pycocoevalcap's table (complete keys only)."""
    from capeval_core.meteor_resources import paraphrase_table

    inflate = zlib.decompressobj(wbits=31)
    raw = inflate.decompress(paraphrase_table().read_bytes(), megabytes << 20)
    raw = raw[: raw.rindex(b"\n") + 1]
    lines = raw.split(b"\n")[:-1]
    raw = b"\n".join(lines[: len(lines) // 3 * 3]) + b"\n"
    entries = _table_entries(raw)
    entries.pop(list(entries)[-1])  # its entries may go on past the part read
    return entries


def test_shipped_index_gives_the_tables_paraphrases_on_a_sample(tmp_path):
    """The first 4 MB of the real table (about 8,000 phrases 1), read plainly, against the
    shipped index; and phrases 1 from the middle of the table."""
    from capeval_core import meteor_shipped
    from capeval_core.meteor_resources import ParaphraseIndex

    index = ParaphraseIndex.in_memory(
        tmp_path / "x.idx", *meteor_shipped.decode(meteor_shipped.shipped_path())
    )
    sample = _first_entries(4)
    assert len(sample) > 5000
    for key, targets in sample.items():
        assert list(index.lookup(key)) == targets, key
    # pycocoevalcap's table, read with zcat
    assert "sits" in index.lookup("is sitting") and "one man" in index.lookup("a man")
    assert index.lookup("dog") == ("chien", "dogs", "of dogs")
    assert index.lookup("couch") == () and index.lookup("xyzzyq") == ()


@pytest.mark.slow
def test_shipped_index_equals_a_fresh_build():
    """Every array of the expanded shipped index equals the build from pycocoevalcap's table
    (hash table, keys, entry offsets, hashes, word counts, every phrase 2's text)."""
    from capeval_core import meteor_shipped
    from capeval_core.meteor_resources import _index_arrays, paraphrase_table

    built = _index_arrays(paraphrase_table())
    assert same_index(built, meteor_shipped.decode(meteor_shipped.shipped_path())) == []


def test_the_kernels_loaded_ahead_are_the_ones_the_expansion_calls():
    """``load_expansion`` names the very signatures ``decode`` calls with: a signature that
    differed would not be loaded ahead, and the call would compile one more (seconds)."""
    from capeval_core import meteor_kernel as kernel
    from capeval_core import meteor_shipped

    kernels = (kernel.gather, kernel.expand_phrases, kernel.expand_entries, kernel.phrase_table)
    kernel.load_expansion()
    loaded = [set(k.signatures) for k in kernels]
    assert all(loaded)
    meteor_shipped.decode(meteor_shipped.shipped_path())
    assert [set(k.signatures) for k in kernels] == loaded


def test_first_run_expands_the_shipped_index(cold_cache, capfd):
    """An empty cache: the index comes from the shipped file (no indexing of the table, no
    line on stderr), and the cache file written from it is intact and names the table."""
    mr = cold_cache
    index = mr.paraphrase_index()
    assert "sits" in index.lookup("is sitting")
    path = mr.paraphrase_index_path()
    assert index.path == path and mr.ParaphraseIndex(path).intact()
    assert index.header["source_stamp"] == mr.table_stamp(mr.paraphrase_table())
    assert len(index) == 5_274_084
    assert capfd.readouterr().err == ""


def test_shipped_index_of_another_table_is_not_used(cold_cache, tmp_path, monkeypatch, capfd):
    """A table other than the one the file was made from is indexed itself, with one line
    saying why; so is it when the shipped file cannot be read (here: cut short)."""
    from capeval_core import meteor_shipped

    mr = cold_cache
    table = tmp_path / "paraphrase-en.gz"
    table.write_bytes(gzip.compress(ODD_TABLE))
    monkeypatch.setattr(mr, "paraphrase_table", lambda: table)
    index = mr.paraphrase_index()
    err = capfd.readouterr().err
    assert "shipped in meteor_paraphrase.npz was made from another table" in err
    assert "indexing METEOR's paraphrase table" in err
    assert list(index.lookup("is sitting")) == ["sits", "is seated"] and len(index) == 8

    damaged = tmp_path / "damaged.npz"
    good = meteor_shipped.shipped_path().read_bytes()
    damaged.write_bytes(good[: len(good) // 2])
    monkeypatch.setattr(meteor_shipped, "shipped_path", lambda: damaged)
    mr.paraphrase_index_path().unlink()
    mr._INDEX = None
    assert list(mr.paraphrase_index().lookup("is sitting")) == ["sits", "is seated"]
    assert "shipped in damaged.npz cannot be read (BadZipFile" in capfd.readouterr().err


def test_expanded_hashes_are_the_reference_hashes(tmp_path):
    """The compiled expansion hashes phrases as :func:`phrase_hash` does."""
    from capeval_core import meteor_shipped
    from capeval_core.meteor_resources import _index_arrays, phrase_hash

    table = tmp_path / "paraphrase-en.gz"
    table.write_bytes(gzip.compress(ODD_TABLE))
    path = tmp_path / "shipped.npz"
    meteor_shipped.write(path, meteor_shipped.encode(*_index_arrays(table)))
    header, arrays = meteor_shipped.decode(path)
    text = arrays["target_text"]
    for e in range(header["n_entries"]):
        phrase = text[arrays["target_start"][e] : arrays["target_end"][e]].tobytes()
        assert int(arrays["target_hash"][e]) == phrase_hash(phrase)
        assert int(arrays["target_words"][e]) == phrase.count(b" ") + 1
    assert np.all(np.diff(arrays["key_entry_offsets"]) > 0)


def test_a_flipped_byte_in_the_shipped_file_is_refused(tmp_path):
    """Each member carries the zip format's CRC-32: a damaged shipped file raises on reading
    (a first run then indexes the table, as above) instead of giving other paraphrases."""
    import struct
    import zipfile

    from capeval_core import meteor_shipped

    path = meteor_shipped.shipped_path()
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("entry_phrase.npy")
    name_len, extra_len = struct.unpack(
        "<HH", data[info.header_offset + 26 : info.header_offset + 30]
    )
    data[info.header_offset + 30 + name_len + extra_len + info.compress_size // 2] ^= 1
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(bytes(data))
    with pytest.raises((zipfile.BadZipFile, zlib.error)):
        meteor_shipped.decode(damaged)
