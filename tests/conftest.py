"""Shared helpers: golden reference files and the oracle's availability; in a fresh clone,
the package's kernels compiled once before the tests start."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
ROOT = Path(__file__).resolve().parents[1]


#: for every JVM the tests start (pycocoevalcap's jars, the oracle's small programs): the JIT's
#: first tier only and a one-thread collector. The same output for a quarter less CPU (the
#: live pycocoevalcap run: 20 s of CPU instead of 27); the oracle tools keep Java's defaults.
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def _kernels_compiled() -> bool:
    """Whether numba has METEOR's kernels (the costliest) compiled beside the sources; a
    cache elsewhere (``NUMBA_CACHE_DIR``) counts as compiled: it is the caller's."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return True
    return any((ROOT / "capeval_core" / "__pycache__").glob("meteor_kernel.*.nbi"))


#: the score cache of this run (its own: see pytest_configure), removed at its end
_SCORES_CACHE: list[str] = []


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _SCORES_CACHE:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_configure(config: pytest.Config) -> None:
    """The JVMs' options (above); and on the process that starts the test workers, in a
    fresh clone: the kernels are compiled first, by two processes side by side (15 s on two
    cores), so that no worker, app server or scoring worker compiles them again (they did so
    each, all at once: a fresh clone's run took 40 s longer than the next). A part that
    fails says so here; the tests that need its kernels then show the failure."""
    if JVM_OPTIONS not in os.environ.get("JDK_JAVA_OPTIONS", ""):  # inherited by the workers
        os.environ["JDK_JAVA_OPTIONS"] = " ".join(
            filter(None, [os.environ.get("JDK_JAVA_OPTIONS"), JVM_OPTIONS])
        )
    if not hasattr(config, "workerinput"):  # one for the run, inherited by the workers
        # Scores are cached by signature, which names capeval's version, not its code: a
        # run after an edit of a metric read the values of the code before from the user's
        # cache, and its tests passed on numbers the edited code never computed.
        _SCORES_CACHE.append(tempfile.mkdtemp(prefix="capeval-test-scores-"))
        os.environ["CAPEVAL_SCORES_CACHE_DIR"] = _SCORES_CACHE[0]
    if hasattr(config, "workerinput") or _kernels_compiled():
        return
    from tests.warm_kernels import PARTS

    parts = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.warm_kernels", part],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for part in PARTS
    ]
    for part, process in zip(PARTS, parts, strict=True):
        _, err = process.communicate()
        if process.returncode:
            last = err.strip().splitlines()[-1:] or ["no message"]
            print(f"compiling the {part} kernels ahead failed: {last[0]}", file=sys.stderr)


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
