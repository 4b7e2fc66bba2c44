"""Write the package's copy of CoreNLP 3.6.0's English PCFG from the Maven models jar.

    python -m tools.spice_pcfg_grammar [--jar stanford-corenlp-3.6.0-models.jar]

The jar defaults to ``$CAPEVAL_CORENLP_MODELS``, else the SPICE oracle's copy
(``python -m tools.spice_oracle fetch`` puts it there). The grammar is read with
:func:`capeval_core.spice.pcfg.grammar.read_serialized` and written as plain arrays to
``capeval_core/data/spice_pcfg/englishPCFG-3.6.0.npz``, with a record of the source beside it
(Maven coordinates, the jar's and the grammar file's SHA-256, the arrays' SHA-256, the licence).
The arrays are then read back and compared with the jar's grammar, field by field.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import zipfile
from pathlib import Path

import numpy as np

ARTIFACT = "edu.stanford.nlp:stanford-corenlp:3.6.0:jar:models"


def default_jar() -> Path:
    from tools.spice_oracle import use_models_jar

    jar = use_models_jar()
    if jar is None:
        raise SystemExit(
            "no models jar: pass --jar, set $CAPEVAL_CORENLP_MODELS, or run "
            "`python -m tools.spice_oracle fetch`"
        )
    return jar


def same_grammar(a, b) -> list[str]:
    """The fields where two grammars differ (none: the same grammar)."""
    from dataclasses import fields

    out = []
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            same = x.dtype == y.dtype and np.array_equal(x.view(np.uint8), y.view(np.uint8))
        else:
            same = x == y
        if not same:
            out.append(f.name)
    return out


def write(jar: Path) -> Path:
    from capeval_core.spice.pcfg import grammar as gm

    stamp = gm.grammar_stamp(jar)
    with zipfile.ZipFile(jar) as zf:
        member = zf.read(gm.GRAMMAR_MEMBER)
    g = gm.read_serialized(member, stamp)
    if sorted(g.words.values()) != list(range(len(g.words))):
        raise SystemExit("the grammar's word index is not numbered 0..n-1: not writable as a list")
    arrays_path, record_path = gm.shipped_paths()
    arrays_path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(arrays_path, **gm.to_arrays(g))
    record = {
        "what": "CoreNLP 3.6.0's English PCFG (englishPCFG.ser.gz) as plain arrays",
        "artifact": ARTIFACT,
        "member": gm.GRAMMAR_MEMBER,
        "jar_sha256": hashlib.sha256(jar.read_bytes()).hexdigest(),
        "member_sha256": hashlib.sha256(member).hexdigest(),
        "stamp": stamp,
        "format": gm.SHIPPED_FORMAT,
        "arrays_sha256": hashlib.sha256(arrays_path.read_bytes()).hexdigest(),
        "licence": "GPL-3.0-or-later (Stanford CoreNLP 3.6.0)",
        "written_by": "tools/spice_pcfg_grammar.py",
    }
    record_path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    gm.shipped_source.cache_clear()
    diff = same_grammar(gm.read_shipped(), g)
    if diff:
        raise SystemExit(f"the written arrays differ from the jar's grammar in {diff}")
    print(f"wrote {arrays_path} ({arrays_path.stat().st_size / 1e6:.1f} MB), {record_path}")
    return arrays_path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jar", type=Path, help="stanford-corenlp-3.6.0-models.jar")
    args = ap.parse_args(argv)
    write(args.jar or default_jar())


if __name__ == "__main__":
    main()
