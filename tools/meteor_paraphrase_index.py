"""Write ``capeval_core/data/meteor_paraphrase.npz``: METEOR's paraphrase index, shipped.

    python -m tools.meteor_paraphrase_index     # reads the table pycocoevalcap 1.2 installs

Indexes ``meteor/data/paraphrase-en.gz`` exactly as a first run without the shipped file
does (:func:`capeval_core.meteor_resources._index_arrays`), codes the result compactly
(:func:`capeval_core.meteor_shipped.encode`), checks that it expands back to the same index,
and writes it with the table's name and content stamp. Deterministic: the same table gives
the same members. Takes about a minute and 2 GB of memory.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from capeval_core import meteor_shipped
from capeval_core.meteor_resources import _index_arrays, paraphrase_table


def same_index(a: tuple[dict, dict], b: tuple[dict, dict]) -> list[str]:
    """What differs between two indexes (header fields, arrays; phrase 2 texts compared
    entry by entry, whatever text they are stored in): empty when they are the same."""
    from capeval_core import meteor_kernel as kernel

    (ha, aa), (hb, ab) = a, b
    wrong = [f for f in ("source_stamp", "n_keys", "n_entries", "max_words") if ha[f] != hb[f]]
    n_keys, n = ha["n_keys"], ha["n_entries"]
    limits = {"key_entry_offsets": n_keys + 1, "key_text_offsets": n_keys + 1}
    for name in (
        "phrase_slots", "phrase_hash", "phrase_key", "phrase_prefix", "key_hash",
        "key_entry_offsets", "key_text_offsets", "key_text", "target_hash", "target_words",
    ):  # fmt: skip
        x, y = aa[name][: limits.get(name)], ab[name][: limits.get(name)]
        if x.shape != y.shape or not np.array_equal(x, y):
            wrong.append(name)
    texts = [
        kernel.gather(arrays["target_text"], arrays["target_start"][:n], arrays["target_end"][:n])
        for _, arrays in (a, b)
    ]
    if not all(np.array_equal(x, y) for x, y in zip(*texts, strict=True)):
        wrong.append("phrase 2 texts")
    return wrong


def main() -> None:
    source = paraphrase_table()
    dest = meteor_shipped.shipped_path()
    started = time.perf_counter()
    built = _index_arrays(source)
    members = meteor_shipped.encode(*built)
    tmp = dest.with_name(dest.name + ".tmp.npz")
    meteor_shipped.write(tmp, members)
    wrong = same_index(built, meteor_shipped.decode(tmp))
    if wrong:
        tmp.unlink()
        sys.exit(f"the coded index does not expand to the built one: {', '.join(wrong)}")
    tmp.replace(dest)
    meta = meteor_shipped.shipped_meta(dest)
    print(
        f"wrote {dest} ({dest.stat().st_size / 1e6:.1f} MB) from {source.name} "
        f"{meta['source_stamp']}: {meta['n_keys']} keys, {meta['n_entries']} entries, "
        f"{meta['n_phrases']} phrases of {meta['n_words']} words "
        f"({time.perf_counter() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
