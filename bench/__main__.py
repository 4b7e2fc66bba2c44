"""Run every benchmark: ``python -m bench [NAME ...]``."""

from __future__ import annotations

import argparse

from bench import foundation, judgments, meteor, perturb, spice, wmd

BENCHMARKS = {
    "foundation": foundation.main,
    "meteor": meteor.main,
    "judgments": judgments.main,
    "wmd": wmd.main,
    "spice": spice.main,
    "perturb": perturb.main,
}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument(
        "names", nargs="*", help=f"benchmarks to run (default: all of {list(BENCHMARKS)})"
    )
    parser.add_argument("--images", type=int, default=5000, help="COCO val2014 images to score")
    args = parser.parse_args()
    unknown = sorted(set(args.names) - set(BENCHMARKS))
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; choose from {list(BENCHMARKS)}")
    for name in args.names or BENCHMARKS:
        BENCHMARKS[name](args.images)


if __name__ == "__main__":
    main()
