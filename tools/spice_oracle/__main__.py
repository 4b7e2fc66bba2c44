"""``python -m tools.spice_oracle fetch | parse IN.tsv OUT.jsonl [--workers N]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from tools import spice_oracle


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.spice_oracle")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("fetch", help="copy the SPICE jar and fetch CoreNLP 3.6.0 with Maven")
    p = sub.add_parser("parse", help="run SpiceOracle on id<TAB>caption lines")
    p.add_argument("input", type=Path)
    p.add_argument("output", type=Path)
    p.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if args.command == "fetch":
        print(spice_oracle.fetch())
        return
    rows = [tuple(line.split("\t", 1)) for line in args.input.read_text("utf-8").splitlines()]
    spice_oracle.parse(rows, args.output, args.workers)


if __name__ == "__main__":
    main()
