"""Worker processes for one run: started together, stopped together, and stopped at once when
the run ends early.

A run that ends early (an error, Ctrl-C, the app's Cancel button, a closed browser tab, a newer
run of the same page) must not leave its workers computing parts nobody will read. Leaving the
``with`` block of a :class:`WorkerPool` by an exception drops the queued tasks, ends the
processes of the running ones and waits until they are gone (the standard pool's own exit would
wait for every queued task to finish first).

No task's future is ever cancelled from outside the pool's own thread: Python 3.11's pool,
when one of its processes dies, sets an error on every future still queued, and a future
cancelled meanwhile makes that thread raise ``InvalidStateError`` (CPython gh-107219, fixed in
3.12). A caller that wants to take a queued task back uses a :class:`Claims` flag instead.

Workers run at the priority the process asked for (:func:`set_niceness`): the app lowers its
workers' so that the people editing on its other pages are served first; a command-line run
keeps the normal priority. This module imports nothing of capeval, so every pool of the
package (the scoring engine's, SPICE's parse workers) can use it.

A long computation can also run whole in a process of its own (:func:`run_apart`): its
Python work (tokenizing, collecting the workers' parts, resampling) then never waits for the
interpreter lock of the app's server, where every page of every person runs in a thread.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

#: seconds a terminated worker gets to exit before it is killed
_EXIT_S = 5.0

_niceness = 0
#: one thread at a time hides and restores the main module (the app's sessions share it)
_MAIN_LOCK = threading.RLock()


def set_niceness(increment: int) -> None:
    """Start later workers ``increment`` steps below this process's priority (``os.nice``;
    0: the same priority). The app calls it once, so its scoring workers give way to the
    requests of the people using it."""
    global _niceness
    _niceness = max(0, int(increment))


def niceness() -> int:
    """The increment :func:`set_niceness` chose for workers started from now on."""
    return _niceness


@contextlib.contextmanager
def main_left_alone() -> Iterator[None]:
    """While capeval starts processes, they do not run the main script of this one.

    A spawned process imports the parent's ``__main__`` (to unpickle what it defines), which
    runs a script's top-level code: an evaluation script written without an ``if __name__ ==
    "__main__"`` guard, as captioning repositories write them, would evaluate again in every
    worker (its lines printed twice), and in the app, whose pages Streamlit runs as
    ``__main__``, every process would run the app's page in bare mode (seconds of imports
    and drawing for nothing, a screen of warnings in the server's log). capeval's processes
    need nothing from it (their tasks are capeval's functions), so the main module shows no
    path and no module name meanwhile.
    """
    import sys

    with _MAIN_LOCK:
        main = sys.modules.get("__main__")
        if main is None:
            yield
            return
        saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
        main.__dict__.pop("__file__", None)
        main.__dict__["__spec__"] = None
        try:
            yield
        finally:
            main.__dict__.pop("__spec__", None)
            main.__dict__.update(saved)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """While processes start, Ctrl-C (SIGINT) waits in this thread: a process started
    meanwhile starts with it held too, until its :func:`_setup` ignores it. A terminal sends
    Ctrl-C to every process of its group, and a worker it reached while importing capeval
    printed a traceback of its own. A Ctrl-C that came meanwhile arrives here at the end.

    The multiprocessing resource tracker is started first: starting it releases SIGINT in
    the starting thread (it holds SIGINT itself for its own start)."""
    if not hasattr(signal, "pthread_sigmask"):  # no signal masks on this platform
        yield
        return
    from multiprocessing import resource_tracker

    with contextlib.suppress(Exception):  # none here: the processes start without it
        resource_tracker.ensure_running()
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _setup(increment: int, initializer: Callable[..., None] | None, initargs: tuple) -> None:
    """Runs first in each worker: Ctrl-C ignored (the process that started it hears it
    and stops its workers, which printed a traceback each), its priority, then the
    caller's initializer."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # held while it started (:func:`_interrupts_held`)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if increment:
        with contextlib.suppress(OSError, AttributeError):  # no os.nice on this platform
            os.nice(increment)
    if initializer is not None:
        initializer(*initargs)


def _started() -> None:
    """A first task per worker: submitting it makes the pool start that worker now."""


class WorkerPool:
    """Spawned worker processes (fresh interpreters: safe to start from the app's threaded
    server) for one run.

    >>> with WorkerPool(1) as pool:
    ...     pool.submit(abs, -3).result()
    3
    """

    def __init__(
        self,
        workers: int,
        *,
        initializer: Callable[..., None] | None = None,
        initargs: tuple = (),
        executor: Callable[..., Any] = ProcessPoolExecutor,
    ) -> None:
        self.workers = workers
        self._executor = executor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_setup,
            initargs=(_niceness, initializer, initargs),
        )
        self._stopped = False
        self._ended: list[int] = []

    def start(self) -> WorkerPool:
        """Begin starting every worker now (the pool would start one per submitted task),
        without the main script (:func:`main_left_alone`)."""
        with main_left_alone(), _interrupts_held():
            for _ in range(self.workers):
                self._executor.submit(_started)
        return self

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future:
        """``fn(*args)`` in a worker (raises ``BrokenProcessPool`` once a worker died). A pool
        not started starts a worker here: without the main script too."""
        with main_left_alone(), _interrupts_held():
            return self._executor.submit(fn, *args)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """The standard pool's shutdown (queued tasks dropped by the pool's own thread)."""
        self._executor.shutdown(wait=wait, cancel_futures=cancel_futures)

    def pids(self) -> list[int]:
        """The process ids of the workers started so far (once stopped: of those it had)."""
        if self._stopped:
            return list(self._ended)
        return [p.pid for p in self._processes() if p.pid is not None]

    def _processes(self) -> list[Any]:
        # the standard pool keeps its processes in ``_processes`` (Python 3.8 to 3.14)
        return list((getattr(self._executor, "_processes", None) or {}).values())

    def stop(self, *, now: bool = False) -> None:
        """Shut the pool down and wait until its processes are gone: after the queued tasks
        are done, or (``now``) at once, the queued tasks dropped and the running ones ended
        (their futures then raise ``BrokenProcessPool``; nobody is waiting for them)."""
        if self._stopped:
            return
        self._ended = self.pids()
        self._stopped = True
        if not now:
            self._executor.shutdown(wait=True)
            return
        processes = self._processes()
        # the standard pool forgets its thread on a shutdown without waiting, and a second
        # shutdown then waits for nothing: kept here to wait for it below
        thread = getattr(self._executor, "_executor_manager_thread", None)
        # the pool's own thread drops the queued tasks (see the module's note on cancelling)
        self._executor.shutdown(wait=False, cancel_futures=True)
        _terminate(processes)
        if thread is not None:  # it has seen them go: every future of the pool is done
            thread.join(_EXIT_S * 6)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        # an exception of any kind (a KeyboardInterrupt, the app's stop of a run) ends the
        # run: its workers stop at once
        self.stop(now=exc_type is not None)


class Claims:
    """One flag per task, shared with the workers, so that a task is done exactly once by
    whichever side claims it first: the caller works through the tasks from the back while
    the workers take them from the front (instead of cancelling queued futures; see the
    module's note). Pass :meth:`share` to the pool's initializer, :func:`claim` in a worker.
    """

    def __init__(self, n: int) -> None:
        self._flags = multiprocessing.get_context("spawn").Array("b", n)

    def share(self) -> Any:
        """What the workers' initializer hands to :func:`install`."""
        return self._flags

    def claim(self, i: int) -> bool:
        """Claim task ``i`` here: False when a worker has it already."""
        return _claim(self._flags, i)


def _claim(flags: Any, i: int) -> bool:
    with flags.get_lock():
        if flags[i]:
            return False
        flags[i] = 1
        return True


#: in a worker: the claim flags its pool shares (see :class:`Claims`)
_worker_claims: Any = None


def install(flags: Any) -> None:
    """A worker's initializer: keep the pool's claim flags."""
    global _worker_claims
    _worker_claims = flags


def claim(i: int) -> bool:
    """In a worker: claim task ``i``; False when the caller (or another worker) has it."""
    return _worker_claims is None or _claim(_worker_claims, i)


# -- one computation in a process of its own -----------------------------------------------------
#: longest wait, in seconds, between two calls of :func:`run_apart`'s ``on_report`` (with the
#: last report again when nothing new came): a caller stops the run by raising from it
TICK = 1.0


class ApartError(RuntimeError):
    """The process of :func:`run_apart` ended without an answer (killed, out of memory)."""


class _Stopped(BaseException):
    """Raised in the process of :func:`run_apart` when its caller stops it (SIGTERM), so that
    its ``with`` blocks (a :class:`WorkerPool`'s above all) stop what they started."""


def _stop(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the clean-up is not interrupted
    raise _Stopped


def _end_children() -> None:
    """Stop every process this one started and still has (a worker whose start the stop
    interrupted, before any ``with`` block held it)."""
    _terminate(multiprocessing.active_children())


def _terminate(processes: list[Any]) -> None:
    """Terminate every process, then wait for each (killed if it has not ended in
    :data:`_EXIT_S`)."""
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            process.terminate()
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AttributeError, AssertionError):
            process.join(_EXIT_S)
            if process.is_alive():
                process.kill()
                process.join(_EXIT_S)


def _apart_main(channel: Any, increment: int, fn: Callable[..., Any], args: tuple) -> None:
    """The process of :func:`run_apart`: its priority, then ``fn(report, *args)``; every
    report, then the result or the exception, pickled here (an object that cannot be pickled
    is told as an error instead of being lost in the queue's thread)."""
    global _niceness
    signal.signal(signal.SIGTERM, _stop)
    if increment:
        with contextlib.suppress(OSError, AttributeError):
            os.nice(increment)
    _niceness = 0  # its own workers inherit this process's priority

    def report(*message: Any) -> None:
        channel.put(("report", message))

    try:
        answer = ("result", pickle.dumps(fn(report, *args), pickle.HIGHEST_PROTOCOL))
    except _Stopped:
        _end_children()
        return  # the caller stopped it and waits for nothing
    except BaseException as exc:  # handed to the caller, who raises it
        try:
            answer = ("error", pickle.dumps(exc, pickle.HIGHEST_PROTOCOL))
        except Exception:  # an exception that cannot be pickled
            answer = ("error", pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}")))
    channel.put(answer)


def run_apart(
    fn: Callable[..., Any],
    /,
    *args: Any,
    on_report: Callable[..., None] = lambda *message: None,
    niceness: int | None = None,
) -> Any:
    """``fn(report, *args)`` in a spawned process of its own; returns what it returns, or
    raises what it raises.

    Each ``report(*message)`` there is ``on_report(*message)`` here, in the calling thread,
    and the last one is repeated every :data:`TICK` seconds without news (so a caller that
    stops a run by raising from its callback, as the app's Cancel button does, is heard
    while ``fn`` works). Whatever ends the wait early ends the process: it is terminated,
    ``fn`` is interrupted where it is (its ``with`` blocks run, so a :class:`WorkerPool` it
    holds stops its workers at once) and waited for. The process runs ``niceness`` steps
    below this one (default: :func:`niceness`) and so do the workers it starts. ``fn`` and
    ``args`` must pickle (``fn`` a module-level function).

    >>> run_apart(isinstance, int)  # isinstance(report, int), computed apart
    False
    """
    context = multiprocessing.get_context("spawn")
    channel = context.Queue()
    increment = _niceness if niceness is None else max(0, int(niceness))
    process = context.Process(
        target=_apart_main, args=(channel, increment, fn, args), name="capeval-apart", daemon=False
    )
    with main_left_alone():
        process.start()
    last: tuple[Any, ...] | None = None
    try:
        while True:
            try:
                kind, payload = channel.get(timeout=TICK)
            except queue.Empty:
                if not process.is_alive():
                    with contextlib.suppress(queue.Empty):  # an answer put just before its end
                        kind, payload = channel.get(timeout=TICK)
                        break
                    raise ApartError(
                        f"the computation's process ended without an answer (exit code "
                        f"{process.exitcode})"
                    ) from None
                if last is not None:
                    on_report(*last)
                continue
            if kind != "report":
                break
            last = payload
            on_report(*payload)
    except BaseException:
        _end(process)
        raise
    finally:
        channel.close()
    process.join(_EXIT_S)
    if process.is_alive():
        _end(process)
    value = pickle.loads(payload)
    if kind == "error":
        raise value
    return value


def _end(process: Any) -> None:
    """Stop the process of :func:`run_apart` and wait until it and its workers are gone."""
    workers = _children(process.pid)
    with contextlib.suppress(OSError, ValueError, AttributeError):
        process.terminate()
        # it stops its own workers first (a WorkerPool's exit waits up to _EXIT_S for each)
        process.join(4 * _EXIT_S)
        if process.is_alive():
            process.kill()
            process.join(_EXIT_S)
    # a worker it had no time to stop (killed, or ended at an unlucky moment) is no longer
    # anyone's child here: end it and wait until it is gone
    for pid in workers:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + _EXIT_S
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)


def _children(pid: int | None) -> list[int]:
    """The processes ``pid`` started and still has (Linux's /proc; none known elsewhere)."""
    children: list[int] = []
    with contextlib.suppress(OSError):  # each of its threads' children
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                children += [int(c) for c in (task / "children").read_text().split()]
    return children


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
