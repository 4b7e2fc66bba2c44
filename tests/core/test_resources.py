"""Resources: the cache directory, the COCO reader and clear messages when things are missing."""

from __future__ import annotations

import pytest

from capeval_core import MissingResourceError, resources


def test_cache_dir_override(tmp_path, monkeypatch):
    monkeypatch.setenv(resources.CACHE_ENV, str(tmp_path / "c"))
    assert resources.cache_dir() == tmp_path / "c"
    assert (tmp_path / "c").is_dir()


def test_coco_val_captions_read_from_the_jar():
    caps = resources.coco_captions("val")
    assert len(caps) == 202_654  # captions_val2014.json, as documented in the dependency notes
    assert len({c.image_id for c in caps}) == 40_504


def test_caption_sets_protocol():
    sets = resources.coco_caption_sets("val", 3)
    assert [s.image_id for s in sets] == sorted(s.image_id for s in sets)
    assert all(len(s.references) >= 4 for s in sets)


def test_bad_split_is_a_value_error():
    with pytest.raises(ValueError, match="split"):
        resources.coco_captions("test")


def test_missing_file_message_says_how_to_fix():
    with pytest.raises(MissingResourceError, match="pip install --force-reinstall pycocoevalcap"):
        resources.pycocoevalcap_file("no/such/file.txt")


def test_missing_package_message(monkeypatch):
    monkeypatch.setattr(resources.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MissingResourceError, match=r"pip install pycocoevalcap==1\.2"):
        resources.pycocoevalcap_dir()


def test_inventory_lists_resources():
    names = [i.name for i in resources.inventory()]
    assert names[0] == "capeval"
    assert "COCO 2014 captions" in names and "METEOR paraphrase table" in names


def test_inventory_shows_the_shipped_spice_grammar_and_coco_parses(tmp_path, monkeypatch):
    """No models jar anywhere: SPICE's exact parser is there all the same, from the package."""
    monkeypatch.setenv("CAPEVAL_CORENLP_MODELS", str(tmp_path / "absent.jar"))
    monkeypatch.setattr(resources, "pycocoevalcap_dir", lambda: tmp_path)
    item = next(i for i in resources.inventory() if i.name.startswith("SPICE parser"))
    assert item.available and not item.optional and item.version == "englishPCFG-c7b6ced1-1883795"
    assert "englishPCFG-3.6.0.npz" in item.detail and "absent.jar" not in item.detail
    assert "COCO val2014 (197,313 captions)" in item.detail
    monkeypatch.setenv("CAPEVAL_SPICE_SHIPPED", "0")
    item = next(i for i in resources.inventory() if i.name.startswith("SPICE parser"))
    assert "turned off" in item.detail


def test_source_stamp_follows_content_not_mtime(tmp_path):
    """A re-installed file (same bytes, new mtime) keeps its stamp, so built caches are shared
    between virtualenvs; changed bytes of the same size get a new one."""
    import os

    a, b = tmp_path / "a.gz", tmp_path / "b.gz"
    a.write_bytes(b"paraphrase table v1")
    b.write_bytes(b"paraphrase table v1")
    os.utime(b, ns=(1, 1))
    assert resources.source_stamp(a) == resources.source_stamp(b)
    b.write_bytes(b"paraphrase table v2")
    assert resources.source_stamp(a) != resources.source_stamp(b)
    assert resources.source_stamp(b).startswith(f"{len(b'paraphrase table v2')}-")


def test_build_lock_makes_a_second_builder_wait(tmp_path):
    """While one builder holds the lock of a cache file, another waits for it (and then finds
    the file built, instead of building it a second time)."""
    import threading

    pytest.importorskip("fcntl")
    dest = tmp_path / "index.idx"
    events: list[str] = []
    held = threading.Event()

    def second() -> None:
        held.wait()
        with resources.build_lock(dest):
            events.append("second: " + ("found" if dest.exists() else "missing"))

    thread = threading.Thread(target=second)
    thread.start()
    with resources.build_lock(dest):
        held.set()
        thread.join(0.3)  # the second builder is blocked meanwhile
        events.append("first built")
        dest.write_text("built")
    thread.join(10)
    assert events == ["first built", "second: found"]


# -- what the first scoring run loads (the app's scoring spinner names it) -----------------------
def _cached_stub():
    import functools

    @functools.cache
    def stub() -> object:
        return object()

    return stub


def test_first_use_names_the_paraphrase_index_build(tmp_path, monkeypatch):
    from capeval_core import meteor_resources

    monkeypatch.setattr(meteor_resources, "paraphrase_index_path", lambda: tmp_path / "none.idx")
    pending = resources.first_use_pending()
    assert any("paraphrase index" in p and "only the very first time" in p for p in pending)
    assert not any("opening METEOR" in p for p in pending)


def test_first_use_names_what_loads_until_it_has_loaded(tmp_path, monkeypatch):
    from capeval_core import embeddings, meteor_resources

    index = tmp_path / "built.idx"
    index.write_bytes(b"")
    synsets, vectors = _cached_stub(), _cached_stub()
    monkeypatch.setattr(meteor_resources, "paraphrase_index_path", lambda: index)
    monkeypatch.setattr(meteor_resources, "meteor_synsets", synsets)
    monkeypatch.setattr(embeddings, "default_embeddings", vectors)
    assert resources.first_use_pending() == [
        "opening METEOR's synonym and paraphrase resources",
        "loading the GloVe 6B 50-d word vectors for WMD and MEAN (a few s)",
    ]
    synsets()
    assert resources.first_use_pending() == [
        "loading the GloVe 6B 50-d word vectors for WMD and MEAN (a few s)"
    ]
    vectors()
    assert resources.first_use_pending() == []


def test_first_use_never_raises_and_leaves_missing_resources_to_the_metrics(monkeypatch):
    from capeval_core import embeddings, meteor_resources

    def missing():
        raise MissingResourceError("no cache directory (test)")

    monkeypatch.setattr(meteor_resources, "paraphrase_index_path", missing)
    monkeypatch.setattr(embeddings, "default_embeddings", lambda: None)  # no process cache
    assert resources.first_use_pending() == []
