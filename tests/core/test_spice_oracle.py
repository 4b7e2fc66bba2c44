"""The development-time SPICE oracle still writes what the stage goldens hold (where the
SPICE jar, CoreNLP 3.6.0 and Java are present; skipped with the reason elsewhere)."""

from __future__ import annotations

import json

import pytest

from tests.core.spice_golden import oracle_captions
from tools import spice_oracle

pytestmark = pytest.mark.slow


def test_driver_reproduces_the_golden_records(tmp_path):
    reason = spice_oracle.available()
    if reason is not None:
        pytest.skip(reason)
    captions = oracle_captions()[:40]
    out = tmp_path / "oracle.jsonl"
    spice_oracle.parse([(str(c.annotation_id), c.text) for c in captions], out)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for caption, record in zip(captions, records, strict=True):
        assert [tuple(t) for t in record["tuples"]] == list(caption.tuples)
        for sentence, got in zip(caption.sentences, record["sentences"], strict=True):
            assert [t[1] for t in got["tokens"]] == list(sentence.tags)
            assert [t[2] for t in got["tokens"]] == list(sentence.lemmas)
            for name in ("basic", "ccprocessed", "enhanced"):
                assert sorted(map(str, got[name]["edges"])) == sorted(
                    map(str, sentence.graphs[name]["edges"])
                )
