"""Ctrl-C during a command: one line on stderr, exit status 130 (the shell's for SIGINT), no
traceback from the command or its workers, the workers gone and no output file touched."""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX terminals and signals")

WORDS = ["a", "man", "dog", "cat", "red", "blue", "runs", "sits", "on", "the", "grass",
         "table", "street", "car", "bus", "horse", "near"]  # fmt: skip


def _sets(tmp_path: Path, n: int = 20_000) -> tuple[Path, Path, Path]:
    """Results and references of ``n`` images (enough for the workers and a few seconds'
    work), and a second system for compare."""
    rng = random.Random(0)

    def caption() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))

    results = [{"image_id": i, "caption": caption()} for i in range(n)]
    refs = {
        "images": [{"id": i} for i in range(n)],
        "annotations": [
            {"image_id": i, "id": 5 * i + k, "caption": caption()}
            for i in range(n)
            for k in range(5)
        ],
    }
    paths = tmp_path / "res.json", tmp_path / "ann.json", tmp_path / "res2.json"
    paths[0].write_text(json.dumps(results))
    paths[1].write_text(json.dumps(refs))
    for r in results:
        r["caption"] = " ".join(reversed(r["caption"].split()))
    paths[2].write_text(json.dumps(results))
    return paths


def _interrupt_when(argv: list[str], mark: bytes, cwd: Path) -> tuple[int, str]:
    """Run ``capeval argv`` with its stderr on a terminal (so its bar is drawn as it goes),
    send SIGINT to its process group, as a terminal's Ctrl-C does, once ``mark`` is on the
    bar, and return its exit status and all it wrote on stderr (read until every process
    of the group has closed the terminal: its workers too, so none is left behind)."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a bar's width
    proc = subprocess.Popen(
        [sys.executable, "-m", "capeval_core.cli", *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=slave,
        cwd=cwd,
        start_new_session=True,  # a process group of its own, as a terminal's job
    )
    os.close(slave)
    out, sent, closed = b"", False, False
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if not sent and mark in out:
                os.killpg(proc.pid, signal.SIGINT)
                sent = True
            if not select.select([master], [], [], 0.1)[0]:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # every writer has closed the terminal (Linux)
                chunk = b""
            if not chunk:
                closed = True
                break
            out += chunk
        status = proc.wait(timeout=30)
    finally:
        os.close(master)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert sent, f"{mark!r} never shown: {out.decode(errors='replace')[-2000:]}"
    assert closed, "a process of its group still holds the terminal: a worker left behind"
    return status, out.decode(errors="replace").replace("\r\n", "\n")


@pytest.mark.parametrize("command", ["score", "compare"])
def test_ctrl_c_is_one_line_and_exit_130(tmp_path: Path, command: str) -> None:
    """It was Python's traceback (the workers' too, when it reached them while they
    started or waited for a task) and exit status -2 (killed by SIGINT)."""
    results, refs, other = _sets(tmp_path)
    out = tmp_path / "out.json"
    out.write_text("kept\n")
    metrics = ["--metrics", "bleu_4", "cider_d", "meteor", "--workers", "2"]
    if command == "score":
        argv = ["score", "--results", str(results), "--annotations", str(refs), *metrics,
                "--per-item", str(out)]  # fmt: skip
        mark = b" items"  # "bleu: 5,000 of 20,000 items": the workers are scoring
    else:
        argv = ["compare", "--results", str(results), str(other), "--annotations", str(refs),
                *metrics, "--json", str(out)]  # fmt: skip
        mark = b"%"
    status, err = _interrupt_when(argv, mark, tmp_path)
    assert status == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    lines = [s for s in err.splitlines() if s.strip()]
    assert lines[-1] == "capeval: interrupted"
    assert err.count("interrupted") == 1
    assert out.read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["res.json", "ann.json", "res2.json", "out.json"]
    )  # no temporary output left beside it


def test_a_worker_ignores_ctrl_c_and_its_parent_stops_it() -> None:
    """A terminal's Ctrl-C reaches every process of the group: a worker raised
    KeyboardInterrupt and printed its traceback; now only the parent hears it."""
    from capeval_core.workers import WorkerPool

    with WorkerPool(1) as pool:
        assert pool.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN
        assert pool.submit(signal.pthread_sigmask, signal.SIG_BLOCK, []).result() == set()


def test_main_says_an_interrupt_in_one_line_and_keeps_the_handler(monkeypatch, capsys) -> None:
    import capeval_core.cli as cli

    def interrupted(args) -> int:  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    parser._subparsers._group_actions[0].choices["metrics"].set_defaults(func=interrupted)  # type: ignore[union-attr]
    assert cli.main(["metrics"]) == 130
    assert capsys.readouterr().err == "capeval: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
