"""Write the parser's held-out golden: the jar's tuples of captions the parser never saw.

    python tools/spice_oracle/make_heldout_golden.py N OUT.json.gz ORACLE.jsonl [...]

The first ``N`` oracle records whose annotation id ``tools/spice_parser/make_data.py`` holds
out of training (id divisible by its ``HOLD_OUT``): COCO train2014 captions, kept as ids (the
test re-reads the text from the installed package) with the jar's proposed tuples.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from golden import SOURCE, write_golden

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spice_parser"))
from make_data import HOLD_OUT


def main() -> None:
    n, dst, sources = int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
    out: dict[str, list] = {}
    for source in sources:
        with open(source, encoding="utf-8") as fh:
            for line in fh:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if int(record["id"]) % HOLD_OUT == 0 and len(out) < n:
                    out[record["id"]] = record["tuples"]
    write_golden(
        dst,
        {
            "source": SOURCE,
            "split": "train2014, held out of the parser's training",
            "tuples": out,
        },
    )
    print(f"{dst}: {len(out)} captions")


if __name__ == "__main__":
    main()
