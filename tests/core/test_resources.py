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
