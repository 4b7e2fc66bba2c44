"""Every file of the malformed-input corpus (``tests/malformed/``, written by
``tools/make_malformed_corpus.py``) ends in exit status 2 and exactly one line on stderr
that names the file and, where one applies, the record, line and column; no traceback, no
output on stdout, no output file (whole or partial) left behind, and no input changed."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from capeval_core.cli import main

CORPUS = Path(__file__).resolve().parents[1] / "malformed"
EXPECTED: dict[str, dict] = json.loads((CORPUS / "expected.json").read_text())
GOOD_RESULTS = CORPUS / "good" / "results.json"
GOOD_CAPTIONS = CORPUS / "good" / "captions.json"
#: folders whose cases the corpus test runs (caches/ and good/ are not refused inputs)
KINDS = (
    "results",
    "annotations",
    "graded",
    "pairwise",
    "flickr8k-expert",
    "flickr8k-cf",
    "composite",
    "pascal50s",
    "abstract50s",
    "outputs",
    "options",
    "thumb",
    "scores",
)
#: files that are part of a kind's folder but are no case (the valid file beside the cases)
SUPPORT = {"Flickr8k.token.txt", "pascal50S.mat"}


def _argv(rel: str, out: Path) -> list[str]:
    kind = rel.split("/", 1)[0]
    path = str(CORPUS / rel)
    if "argv" in EXPECTED[rel]:
        fill = {"{case}": path, "{good}": str(CORPUS / "good"), "{out}": str(out)}
        argv = []
        for arg in EXPECTED[rel]["argv"]:
            for mark, value in fill.items():
                arg = arg.replace(mark, value)
            argv.append(arg)
        return argv
    if kind == "scores":
        return ["correlate", "--judgments", str(CORPUS / "good" / "graded.csv"), "--format",
                "graded", "--metric-scores", path, "--workers", "0",
                "--json", str(out / "out.json")]  # fmt: skip
    if kind == "results":
        return ["score", "--results", path, "--annotations", str(GOOD_CAPTIONS),
                "--per-item", str(out / "items.csv")]  # fmt: skip
    if kind == "annotations":
        return ["score", "--results", str(GOOD_RESULTS), "--annotations", path,
                "--per-item", str(out / "items.json")]  # fmt: skip
    return ["correlate", "--judgments", path, "--format", kind, "--workers", "0",
            "--json", str(out / "out.json")]  # fmt: skip


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own refusals
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def _inputs() -> dict[str, str]:
    """Digest of every file of the corpus: a run that writes over one of its inputs (an
    output pointed at the results file, say) changes it."""
    return {
        str(p.relative_to(CORPUS)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(CORPUS.rglob("*"))
        if p.is_file() and "caches" not in p.parts
    }


def test_corpus_is_large_and_every_case_has_an_expectation():
    on_disk = set()
    for kind in KINDS:
        for entry in (CORPUS / kind).iterdir():
            if entry.name not in SUPPORT:
                on_disk.add(f"{kind}/{entry.name}")
    assert on_disk == set(EXPECTED)
    assert len(EXPECTED) >= 60
    assert {rel.split("/", 1)[0] for rel in EXPECTED} == set(KINDS)


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_malformed_input_gives_one_clear_line(rel, tmp_path):
    expected = EXPECTED[rel]
    before = _inputs()
    code, out, err = _run(_argv(rel, tmp_path))
    lines = err.splitlines()
    assert code == 2, err
    assert out == ""
    assert len(lines) == 1, err
    line = lines[0]
    assert re.match(expected.get("prefix", "capeval: error: "), line), line
    # in the command line's words: no keyword argument of the library (`token_file`)
    assert not re.search(r"`[a-z]+_[a-z_]+`", line), line
    assert "Traceback" not in err
    assert (expected.get("names") or Path(rel).name) in line, line
    assert re.search(expected["message"], line), line
    if expected["where"]:
        assert re.search(expected["where"], line), line
    assert list(tmp_path.iterdir()) == []  # no output, not even a temporary one
    assert _inputs() == before  # no input written over, none left with a temporary file


@pytest.mark.parametrize(
    "rel",
    [
        "results/deep-nesting.json",
        "graded/lone-surrogate.json",
        "abstract50s/nan-labels",
        "options/compare-negative-seed.json",
        "outputs/json-is-a-results-file.json",
    ],
)
def test_in_a_fresh_process_too(rel, tmp_path):
    """The installed entry point: a real interpreter, its own stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "capeval_core.cli", *_argv(rel, tmp_path)],
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []
