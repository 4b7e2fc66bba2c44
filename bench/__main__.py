"""Run every benchmark: ``python -m bench [NAME ...]``."""

from __future__ import annotations

import argparse
import importlib

#: bench modules, each with ``main(n_images)``; imported only when run (worker processes
#: spawned by a bench re-import this module, and should not load the others' libraries)
BENCHMARKS = (
    "foundation",
    "systems",
    "meteor",
    "judgments",
    "wmd",
    "spice",
    "spice_exact",
    "spice_parity",
    "spice_long",
    "perturb",
    "compare",
    "meta_pages",
    "pycocoevalcap",
    "app_load",
)


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
        importlib.import_module(f"bench.{name}").main(args.images)


if __name__ == "__main__":
    main()
