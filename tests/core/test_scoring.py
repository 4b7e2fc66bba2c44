"""score_set: one set scored with several metrics, in worker processes when large (the call
behind ``capeval score`` and ``COCOEvalCap.evaluate``), gives what scoring here gives, from
a script written without an ``if __name__ == "__main__"`` guard."""

from __future__ import annotations

import json
import subprocess
import sys

#: a client script as people write them: top-level code, no main guard. The engine's
#: threshold is lowered so 24 items go to two workers in parts of 8.
SCRIPT = """
import json
import warnings

import numpy as np
from capeval_core import batch as engine, resources
from capeval_core.scoring import score_set

print("top-level code ran")
engine.MIN_PART = 8
resources.available_cpus = lambda: 2  # two workers, whatever this machine has
SETS = [
    ("a man in a red shirt riding a brown horse on a sandy beach", ["a man on a horse"]),
    ("two dogs playing in the grass", ["two dogs play on a lawn", "dogs in the grass"]),
    ("a red bus on a street", ["a bus parked by the curb", "a red double decker bus"]),
    ("a plate of food with broccoli", ["a dish with vegetables", "broccoli and rice on a plate"]),
    ("a cat sleeping on a couch", ["a cat on a sofa", "a sleeping kitten"]),
    ("a kitchen with a stove", ["a small kitchen with an oven", "a stove and a sink"]),
]
cands = [c for c, _ in SETS] * 4
refs = [r for _, r in SETS] * 4
keys = ["bleu_1", "bleu_4", "rouge_l", "cider_d", "spice"]
# SPICE leaves the first caption out (a sentence over 8 words): left out alike both ways
options = {"spice": {"max_sentence_words": 8}}
runs, warned = [], []
for w in (0, 2):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runs.append(score_set(cands, refs, keys, workers=w, options=options))
    warned.append([str(c.message) for c in caught if c.category.__name__ == "ItemsLeftOutWarning"])
print(json.dumps({
    "warned": warned,
    "missing": [{k: r.results[k].missing for k in keys} for r in runs],
    "workers": [r.workers for r in runs],
    "corpus": [{k: r.results[k].corpus for k in keys} for r in runs],
    "items": [{k: r.results[k].segment_values() for k in keys} for r in runs],
    "details": [r.results["spice"].segments[1].details is None for r in runs],
    "statistics": [
        {m: {n: np.asarray(v).tolist() for n, v in s.items()} for m, s in r.statistics.items()}
        for r in runs
    ],
}))
"""


def test_workers_give_the_values_scored_here_and_leave_the_script_alone(tmp_path):
    """Two spawned workers score BLEU, ROUGE-L and SPICE in parts and CIDEr-D whole: every
    corpus and per-item value and every sufficient statistic (SPICE's per-category counts
    among them) equals the in-process run's, the items SPICE leaves out and the warning that
    says so too; and the workers did not run the script's top-level code again (it printed
    its line once)."""
    script = tmp_path / "evaluate.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    lines = done.stdout.splitlines()
    assert lines.count("top-level code ran") == 1
    out = json.loads(lines[-1])
    assert out["workers"] == [0, 2]
    assert out["details"] == [False, True]  # evidence here, values only from workers
    for name in ("corpus", "items", "statistics"):
        assert out[name][0] == out[name][1], name
    assert "category_counts" in out["statistics"][0]["spice"]
    # SPICE left the long caption out (4 times: the sets repeat), the other metrics none
    assert out["missing"][0] == out["missing"][1]
    assert sorted(map(int, out["missing"][0]["spice"])) == [0, 6, 12, 18]
    assert all(not m for k, m in out["missing"][0].items() if k != "spice")
    assert out["warned"][0] == out["warned"][1] and len(out["warned"][0]) == 1
    assert out["warned"][0][0].startswith("SPICE left out 4 of 24 items (not scored): 0 (")
