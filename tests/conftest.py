"""Shared helpers: golden reference files and the oracle's availability; in a fresh clone,
the package's kernels compiled once while the tests start."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
ROOT = Path(__file__).resolve().parents[1]

#: the process compiling the kernels (``tests/warm_kernels.py``), while the workers start
_warming: subprocess.Popen | None = None


def _kernels_compiled() -> bool:
    """Whether numba has METEOR's kernels (the costliest) compiled beside the sources; a
    cache elsewhere (``NUMBA_CACHE_DIR``) counts as compiled: it is the caller's."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return True
    return any((ROOT / "capeval_core" / "__pycache__").glob("meteor_kernel.*.nbi"))


def pytest_configure(config: pytest.Config) -> None:
    """On the process that starts the test workers, in a fresh clone: one process compiles
    the kernels in the background, so that fewer of the workers, app servers and scoring
    workers compile them each (what it cannot do, the tests themselves then show)."""
    global _warming
    if hasattr(config, "workerinput") or _kernels_compiled():
        return
    _warming = subprocess.Popen(
        [sys.executable, "-m", "tests.warm_kernels"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    if _warming is not None:
        _warming.wait()


# The oracle (pycocoevalcap's Java PTB tokenizer and METEOR) needs Java. CI must have it.
requires_java = pytest.mark.skipif(
    shutil.which("java") is None and not os.environ.get("CI"),
    reason="Java is not installed: the pycocoevalcap oracle needs it",
)


def fresh_python(code: str) -> str:
    """Run ``code`` in a fresh interpreter (nothing imported yet) and return what it printed;
    for tests of what an import loads. A failing snippet fails the test."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout


def load_golden(name: str) -> dict:
    """A golden file: reference outputs of pycocoevalcap 1.2 with Java 17 (see its description)."""
    return json.loads((GOLDEN / f"{name}.json").read_text())


def golden_small() -> list[dict]:
    return load_golden("golden-small")["cases"]


def golden_coco200() -> tuple[list[dict], list[str], list[list[str]]]:
    """The 200-image golden items with their raw captions re-read from COCO val2014."""
    from capeval_core.resources import coco_captions

    items = load_golden("coco200-scores")["items"]
    by_image: dict[int, list] = {}
    for cap in coco_captions("val"):
        by_image.setdefault(cap.image_id, []).append(cap)
    cands, refs = [], []
    for item in items:
        caps = sorted(by_image[item["image_id"]], key=lambda c: c.annotation_id)
        cands.append(caps[0].caption)
        refs.append([c.caption for c in caps[1:]])
    return items, cands, refs
