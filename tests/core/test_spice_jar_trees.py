"""The store of the jar's training trees (``tools/spice_parser/jar_trees.py``) against the
SPICE-1.0 oracle's golden records (spice-1.0.jar + CoreNLP 3.6.0, 3,000 train2014 captions)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.core.spice_golden import oracle_captions
from tools.spice_parser import jar_trees

STORE = Path(jar_trees.__file__).with_name("jar-trees-train2014.npz.xz")
HELDOUT = Path(__file__).resolve().parents[1] / "golden" / "spice-oracle-heldout.json.gz"


def _as_record(c) -> dict:
    return {
        "id": str(c.annotation_id),
        "caption": c.text,
        "sentences": [
            {
                "tokens": [[w, t] for w, t in zip(s.words, s.tags, strict=True)],
                "basic": s.graphs["basic"],
            }
            for s in c.sentences
        ],
        "tuples": [list(t) for t in c.tuples],
    }


def _same_tree(record: dict, golden: dict) -> bool:
    if len(record["sentences"]) != len(golden["sentences"]):
        return False
    for ours, jar in zip(record["sentences"], golden["sentences"], strict=True):
        if ours["tokens"] != jar["tokens"] or ours["basic"]["roots"] != jar["basic"]["roots"]:
            return False
        if sorted(map(tuple, ours["basic"]["edges"])) != sorted(map(tuple, jar["basic"]["edges"])):
            return False
    return True


def test_the_golden_records_come_back_from_a_store(tmp_path):
    """Tokens, tags, basic trees and (through capeval's stages) the jar's tuples, in order."""
    golden = [_as_record(c) for c in oracle_captions()]
    store = tmp_path / "store.npz.xz"
    assert jar_trees.pack(golden, store) == len(golden) == 3000
    rows = [(r["id"], r["caption"]) for r in golden]
    back = list(jar_trees.unpack(store, rows))
    assert [r["id"] for r in back] == [r["id"] for r in golden]
    assert all(_same_tree(b, g) for b, g in zip(back, golden, strict=True))
    assert [b["tuples"] for b in back] == [g["tuples"] for g in golden]
    with pytest.raises(ValueError, match="not the first captions"):
        list(jar_trees.unpack(store, rows[1:]))


def test_a_two_sentence_caption_keeps_its_sentences(tmp_path):
    """Four train captions have two CoreNLP sentences: each sentence's tree stays its own."""
    first, second = (_as_record(c) for c in oracle_captions()[:2])
    both = {
        "id": first["id"],
        "caption": first["caption"] + " . " + second["caption"],
        "sentences": first["sentences"] + second["sentences"],
        "tuples": first["tuples"] + second["tuples"],
    }
    both["sentences"][0]["tokens"] = both["sentences"][0]["tokens"] + [[".", "."]]
    both["sentences"][0]["basic"] = {
        "edges": first["sentences"][0]["basic"]["edges"]
        + [
            [
                first["sentences"][0]["basic"]["roots"][0],
                "punct",
                len(both["sentences"][0]["tokens"]),
            ]
        ],
        "roots": first["sentences"][0]["basic"]["roots"],
    }
    store = tmp_path / "store.npz.xz"
    jar_trees.pack([both], store)
    (back,) = jar_trees.unpack(store, [(both["id"], both["caption"])])
    assert _same_tree(back, both)


@pytest.mark.slow
def test_the_committed_store_holds_the_jars_trees():
    """The golden's captions (the captions file's first 3,000) have the jar's tags, trees and
    tuples in the committed store, and the held-out golden's 1,000 (spread over the file's
    first 198,173) the jar's tuples."""
    from tools.spice_parser.make_captions import caption_rows

    golden = {str(c.annotation_id): _as_record(c) for c in oracle_captions()}
    with gzip.open(HELDOUT, "rt", encoding="utf-8") as fh:
        heldout = json.load(fh)["tuples"]
    rows, _ = caption_rows()
    stored = list(jar_trees.unpack(STORE, rows, only=set(golden) | set(heldout)))
    within = {i for i, _ in rows[: jar_trees.stored_count(STORE)]}
    assert set(heldout) <= within
    assert sum(r["id"] in golden for r in stored) == len(golden)
    assert sum(r["id"] in heldout for r in stored) == len(heldout) == 1000
    for record in stored:
        if record["id"] in golden:
            assert _same_tree(record, golden[record["id"]]), record["id"]
            assert record["tuples"] == golden[record["id"]]["tuples"], record["id"]
        else:
            assert record["tuples"] == heldout[record["id"]], record["id"]
