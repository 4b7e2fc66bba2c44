"""The resource inventory (``capeval info``, the Home page) and what a first scoring run loads."""

from __future__ import annotations

from capeval_core import MissingResourceError, inventory, resources


def test_inventory_lists_resources():
    names = [i.name for i in inventory.inventory()]
    assert names[0] == "capeval"
    assert "COCO 2014 captions" in names and "METEOR paraphrase table" in names


def test_inventory_shows_the_shipped_spice_grammar_and_coco_parses(tmp_path, monkeypatch):
    """No models jar anywhere: SPICE's exact parser is there all the same, from the package."""
    monkeypatch.setenv("CAPEVAL_CORENLP_MODELS", str(tmp_path / "absent.jar"))
    monkeypatch.setattr(resources, "pycocoevalcap_dir", lambda: tmp_path)
    item = next(i for i in inventory.inventory() if i.name.startswith("SPICE parser"))
    assert item.available and not item.optional and item.version == "englishPCFG-c7b6ced1-1883795"
    assert "englishPCFG-3.6.0.npz" in item.detail and "absent.jar" not in item.detail
    assert "COCO val2014 (197,313 captions)" in item.detail
    monkeypatch.setenv("CAPEVAL_SPICE_SHIPPED", "0")
    item = next(i for i in inventory.inventory() if i.name.startswith("SPICE parser"))
    assert "turned off" in item.detail


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
    pending = inventory.first_use_pending()
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
    assert inventory.first_use_pending() == [
        "opening METEOR's synonym and paraphrase resources",
        "loading the GloVe 6B 50-d word vectors for WMD and MEAN (a few s)",
    ]
    synsets()
    assert inventory.first_use_pending() == [
        "loading the GloVe 6B 50-d word vectors for WMD and MEAN (a few s)"
    ]
    vectors()
    assert inventory.first_use_pending() == []


def test_first_use_never_raises_and_leaves_missing_resources_to_the_metrics(monkeypatch):
    from capeval_core import embeddings, meteor_resources

    def missing():
        raise MissingResourceError("no cache directory (test)")

    monkeypatch.setattr(meteor_resources, "paraphrase_index_path", missing)
    monkeypatch.setattr(embeddings, "default_embeddings", lambda: None)  # no process cache
    assert inventory.first_use_pending() == []
