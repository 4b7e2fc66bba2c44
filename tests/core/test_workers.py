"""Worker pools stop cleanly (issue #43 item 5, issue #42 item 5): a run stopped mid-way, by an
error or by its caller (the app's Cancel button, a closed tab), ends its worker processes at
once, and nothing is left raising in a thread of the pool; the workers run at the priority the
process chose for them."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import CancelledError
from concurrent.futures.process import BrokenProcessPool

import pytest

from capeval_core import batch, workers
from capeval_core.workers import Claims, WorkerPool

pytestmark = pytest.mark.filterwarnings(
    "error::pytest.PytestUnhandledThreadExceptionWarning",
    "error::pytest.PytestUnraisableExceptionWarning",
)


class Cancelled(Exception):
    """What a caller raises from its progress callback to stop a run."""


@pytest.fixture
def thread_errors(monkeypatch):
    """Every exception that escapes a thread (the pools' own threads) during the test."""
    seen: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_value))
    return seen


def _gone(pid: int) -> bool:
    return not workers._alive(pid)


def _niceness() -> int:
    return os.nice(0)


def _claim_and_sleep(i: int, seconds: float) -> int | None:
    """A task that claims its index, then works (sleeps); None when the caller had it."""
    if not workers.claim(i):
        return None
    time.sleep(seconds)
    return i


def test_a_pool_left_by_an_exception_ends_its_running_and_queued_tasks(thread_errors):
    pool = WorkerPool(2).start()
    pids: list[int] = []
    futures = []
    with pytest.raises(Cancelled), pool:
        futures = [pool.submit(time.sleep, 600) for _ in range(6)]  # two run, four wait
        deadline = time.monotonic() + 120
        while len(pids) < 2 or not all(f.running() for f in futures[:2]):
            assert time.monotonic() < deadline, [f.exception() for f in futures if f.done()]
            time.sleep(0.05)
            pids = pool.pids()
        raise Cancelled
    assert all(_gone(pid) for pid in pids), pids
    for future in futures:  # nobody waits for them; each says it did not run to its end
        assert future.done()
        with pytest.raises((BrokenProcessPool, CancelledError)):
            future.result()
    assert not thread_errors, thread_errors


def test_claims_split_the_tasks_between_the_caller_and_the_workers(thread_errors):
    """The caller works from the back, the workers from the front, each task done once; a
    task the caller took back is never cancelled (the cancel that made Python 3.11's pool
    raise InvalidStateError in its thread when a worker then died)."""
    n = 12
    claims = Claims(n)
    here = []
    with WorkerPool(1, initializer=workers.install, initargs=(claims.share(),)) as pool:
        futures = [pool.submit(_claim_and_sleep, i, 0.05) for i in range(n)]
        for i in reversed(range(n)):
            if not claims.claim(i):
                break
            here.append(i)
            time.sleep(0.05)
        done_there = [f.result() for f in futures]
    there = [i for i in done_there if i is not None]
    assert sorted(here + there) == list(range(n))
    assert not any(f.cancelled() for f in futures)
    assert not thread_errors, thread_errors


@pytest.mark.parametrize("end", ["stopped", "worker killed"])
def test_a_pool_ended_while_the_caller_holds_claims_raises_nothing_in_its_thread(
    end, thread_errors
):
    """The caller has taken the last tasks back while a worker runs the first: the run is
    stopped, or the worker dies (out of memory, killed). Futures cancelled from outside made
    Python 3.11's pool raise InvalidStateError in its thread here; claims leave every
    future to the pool."""
    import signal

    n = 8
    claims = Claims(n)
    pool = WorkerPool(1, initializer=workers.install, initargs=(claims.share(),))
    with pytest.raises(Cancelled), pool:
        futures = [pool.submit(_claim_and_sleep, i, 600) for i in range(n)]
        for i in reversed(range(4, n)):
            assert claims.claim(i)
        deadline = time.monotonic() + 120
        while not claims.share()[0]:  # a worker has begun the first task
            assert time.monotonic() < deadline, "no worker began a task within 120 s"
            time.sleep(0.05)
        pids = pool.pids()
        if end == "worker killed":
            os.kill(pids[0], signal.SIGKILL)
            with pytest.raises(BrokenProcessPool):
                futures[0].result(timeout=60)
        raise Cancelled
    assert all(_gone(pid) for pid in pids)
    assert not thread_errors, thread_errors


def test_workers_run_at_the_priority_the_process_chose(monkeypatch):
    monkeypatch.setattr(workers, "_niceness", 0)
    with WorkerPool(1) as pool:
        same = pool.submit(_niceness).result()
    workers.set_niceness(5)
    with WorkerPool(1) as pool:
        lower = pool.submit(_niceness).result()
    assert lower == min(same + 5, 19), (same, lower)
    assert _niceness() == same  # this process keeps its own


def test_a_scoring_run_cancelled_by_its_progress_callback_stops_its_workers(
    monkeypatch, tmp_path, thread_errors
):
    """The app's Cancel, as the core sees it: ``on_progress`` raises while the workers score
    METEOR in parts; the error reaches the caller, the pool's processes are gone at once, and
    nothing of the unfinished metric is cached."""
    from capeval_core.resources import coco_caption_sets

    monkeypatch.setattr("capeval_core.resources.available_cpus", lambda: 2)  # never capped
    from capeval_core.systems import SystemsInput, score_systems

    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))
    monkeypatch.setattr(batch, "MIN_PART", 4)
    started: list[WorkerPool] = []
    start_pool = batch.start_pool

    def spy(n: int) -> WorkerPool | None:
        pool = start_pool(n)
        started.append(pool)
        return pool

    monkeypatch.setattr(batch, "start_pool", spy)
    sets = coco_caption_sets("val", 40)
    data = SystemsInput(
        ("a", "b"),
        tuple(s.image_id for s in sets),
        (tuple(s.candidate for s in sets), tuple(s.references[0] for s in sets)),
        tuple(s.references[1:] for s in sets),
        ("a.json", "b.json"),
        "test",
    )
    labels: list[str] = []

    def progress(done: int, total: int, label: str) -> None:
        if labels and labels[-1].startswith("scoring in"):
            raise Cancelled  # the first news (or tick) while the workers score the parts
        labels.append(label)

    with pytest.raises(Cancelled):
        score_systems(data, ["meteor"], workers=2, on_progress=progress)
    (pool,) = started
    assert pool is not None and pool.pids()
    assert all(_gone(pid) for pid in pool.pids())
    assert not list((tmp_path / "scores").glob("*.npz"))
    assert not thread_errors, thread_errors


# -- one computation in a process of its own (issue 42's load goal) ------------------------------
def _apart_reports(report, n: int) -> int:
    """Runs apart: reports its priority and ``n`` steps, returns ``n * 2``."""
    report("niceness", os.nice(0))
    for i in range(n):
        report("step", i)
    return n * 2


def _apart_fails(report) -> None:
    from capeval_core.errors import InputError

    raise InputError("results file a.json: no captions")


def _apart_pool_then_wait(report) -> None:
    """Runs apart: starts two workers busy for ten minutes, says their pids, waits."""
    with WorkerPool(2).start() as pool:
        futures = [pool.submit(time.sleep, 600) for _ in range(2)]
        while len(pool.pids()) < 2 or not all(f.running() for f in futures):
            time.sleep(0.05)
        report("workers", os.getpid(), pool.pids())
        for future in futures:
            future.result()


def _apart_dies(report) -> None:
    os._exit(3)


def test_run_apart_returns_the_result_and_relays_every_report_in_order(monkeypatch):
    monkeypatch.setattr(workers, "_niceness", 0)
    seen: list[tuple] = []
    assert workers.run_apart(_apart_reports, 3, on_report=lambda *m: seen.append(m)) == 6
    assert seen[1:] == [("step", 0), ("step", 1), ("step", 2)]
    assert seen[0] == ("niceness", _niceness())  # this process's priority
    seen.clear()
    workers.run_apart(_apart_reports, 0, on_report=lambda *m: seen.append(m), niceness=4)
    assert seen == [("niceness", min(_niceness() + 4, 19))]


def test_run_apart_raises_the_error_of_its_process():
    from capeval_core.errors import InputError

    with pytest.raises(InputError, match=r"a\.json: no captions"):
        workers.run_apart(_apart_fails)


def test_run_apart_stopped_by_its_callback_ends_its_process_and_the_workers_it_started(
    thread_errors,
):
    """The app's Cancel (or a closed tab) raises from the progress callback: the process
    computing apart is ended, and before it goes it stops the workers it started."""
    started: list[tuple] = []

    def on_report(kind: str, pid: int, pids: list[int]) -> None:
        started.append((pid, pids))
        raise Cancelled

    with pytest.raises(Cancelled):
        workers.run_apart(_apart_pool_then_wait, on_report=on_report)
    ((apart, pool),) = started
    assert len(pool) == 2
    assert _gone(apart)
    assert all(_gone(pid) for pid in pool), pool
    assert not thread_errors, thread_errors


def test_run_apart_says_when_its_process_ended_without_an_answer():
    with pytest.raises(workers.ApartError, match="exit code 3"):
        workers.run_apart(_apart_dies)


#: a script without a main guard that computes apart and starts a pool: its top-level code
#: must run once (in the app, Streamlit runs each page as ``__main__``: every process started
#: from a page ran the page again in bare mode)
SCRIPT = """
import os

from capeval_core import workers

print("top-level code ran", flush=True)
print("apart:", workers.run_apart(isinstance, int), flush=True)
with workers.WorkerPool(1).start() as pool:
    print("worker:", pool.submit(abs, -3).result(), flush=True)
with workers.WorkerPool(1) as pool:  # not started: the first task starts its worker
    print("lazy worker:", pool.submit(abs, -4).result(), flush=True)
"""


def test_processes_started_apart_or_in_a_pool_do_not_run_the_main_script(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "client.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=True
    )
    assert done.stdout.splitlines() == [
        "top-level code ran",
        "apart: False",
        "worker: 3",
        "lazy worker: 4",
    ]


def _meteor_in_a_daemon(out) -> None:  # a multiprocessing.Pool's or a DataLoader's worker
    from capeval_core.pycocoevalcap.meteor.meteor import Meteor

    gts = {i: [f"a dog number {i} runs on the grass"] for i in range(1_200)}
    res = {i: [f"a dog {i} runs"] for i in range(1_200)}
    try:
        out.put(("ok", Meteor().compute_score(gts, res)[0], batch.start_pool(2) is None))
    except Exception as exc:  # what the parent reports
        out.put(("error", repr(exc), None))


def test_a_daemonic_process_scores_in_itself(tmp_path, monkeypatch):
    """A daemonic process may not start children: the drop-in's Meteor on 1,000+ images in
    a multiprocessing.Pool worker failed with "daemonic processes are not allowed to have
    children" (pycocoevalcap's only starts the jar's subprocess); it scores in the process."""
    import multiprocessing

    from capeval_core.pycocoevalcap.meteor.meteor import Meteor

    monkeypatch.setenv("CAPEVAL_SCORES_CACHE_DIR", str(tmp_path / "scores"))
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    child = context.Process(target=_meteor_in_a_daemon, args=(out,), daemon=True)
    child.start()
    kind, value, no_pool = out.get(timeout=300)
    child.join(timeout=60)
    assert kind == "ok", value
    assert no_pool is True
    gts = {i: [f"a dog number {i} runs on the grass"] for i in range(1_200)}
    res = {i: [f"a dog {i} runs"] for i in range(1_200)}
    assert value == Meteor().compute_score(gts, res)[0]


def test_the_library_starts_no_more_workers_than_cpus(monkeypatch):
    """score_systems(workers=30) on two CPUs started 30 processes: only the command line
    capped --workers. start_pool, which every library pool goes through, caps them too and
    says so; on one CPU it starts none (the caller scores in its own process)."""
    import warnings

    from capeval_core.errors import CapevalWarning

    monkeypatch.setattr("capeval_core.resources.available_cpus", lambda: 2)
    with pytest.warns(CapevalWarning, match=r"workers=30: 2 CPU\(s\) available here, so 2 "):
        pool = batch.start_pool(30)
    assert pool is not None
    with pool:
        assert pool.workers == 2 and len(pool.pids()) <= 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as many as CPUs: no word
        pool = batch.start_pool(2)
    with pool:
        assert pool.workers == 2
    monkeypatch.setattr("capeval_core.resources.available_cpus", lambda: 1)
    with pytest.warns(CapevalWarning, match="so no worker process is used"):
        assert batch.start_pool(4) is None


def test_score_set_reports_the_workers_it_used(monkeypatch):
    """ScoredSet.workers said the number asked for, not the processes that scored."""
    from capeval_core.errors import CapevalWarning
    from capeval_core.scoring import score_set

    monkeypatch.setattr("capeval_core.resources.available_cpus", lambda: 2)
    monkeypatch.setattr(batch, "MIN_PART", 4)
    candidates = [f"a dog number {i} runs" for i in range(12)]
    references = [[f"a dog {i} runs on grass"] for i in range(12)]
    with pytest.warns(CapevalWarning, match="workers=8"):
        scored = score_set(candidates, references, ["bleu_4"], tokenizer="whitespace", workers=8)
    assert scored.workers == 2
