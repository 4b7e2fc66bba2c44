"""Shared helpers: golden reference files and the oracle's availability."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"

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
