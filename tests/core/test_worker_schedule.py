"""The order in which the scoring engine hands its tasks to the worker processes (issue #40):
whole metrics, then each cut metric's first part (its one-time start-up paid once, while the
other workers take the shared work), then the shared work, then the other parts."""

from __future__ import annotations

from concurrent.futures import Future

from capeval_core import batch
from capeval_core.metrics import metric_class


def test_whole_metrics_then_each_cut_metrics_first_part_then_the_rest(monkeypatch):
    monkeypatch.setattr(batch, "MIN_PART", 4)
    keys = ["bleu_4", "meteor", "cider_d", "spice"]
    metrics = {k: metric_class(k)(tokenizer="ptb") for k in keys}
    tasks = batch.plan_tasks([(k, None) for k in keys], metrics, 16, 2)
    assert tasks[0] == ("cider_d", 0, 16)  # corpus IDF: whole
    assert tasks[1:4] == [("bleu_4", 0, 4), ("meteor", 0, 4), ("spice", 0, 4)]
    assert all(start > 0 for _, start, _ in tasks[4:]) and len(tasks) == 13
    assert [batch.leading_part(t, 16) for t in tasks[:5]] == [False, True, True, True, False]
    # only SPICE's class has shared work (its new captions parsed once)
    assert [k for k in keys if batch._may_share(metrics[k])] == ["spice"]


class _Pool:
    """Runs nothing: records what is submitted, in order, and returns finished futures."""

    workers = 2

    def __init__(self) -> None:
        self.sent: list[tuple[str, ...]] = []

    def submit(self, fn, *args):
        future: Future = Future()
        if fn is batch._shared_part:
            self.sent.append(("shared", args[0]))
            future.set_result(None)
        else:
            self.sent.append((args[0], args[4]))  # metric, start
            future.set_result({})
        return future

    def stop(self, *, now: bool = False) -> None:
        pass


def test_the_first_tasks_go_out_before_the_shared_work_is_worked_out():
    tasks = [
        ("cider_d", 0, 8),
        ("meteor", 0, 4),
        ("spice", 0, 4),
        ("meteor", 4, 8),
        ("spice", 4, 8),
    ]
    pool = _Pool()
    sent_before_shared: list[tuple[str, ...]] = []

    def shared():
        sent_before_shared.extend(pool.sent)
        return {"spice": [object(), object()]}

    collected = []
    batch._collect_workers(
        pool,
        tasks,
        {},
        "ptb",
        "unused",
        lambda mkey, start, values: collected.append((mkey, start, values())),
        lambda *a: {},
        shared,
        {"spice": "parsing new captions"},
        {"spice"},
        lambda label: None,
    )
    # CIDEr-D and METEOR's first part were out while the parent worked out the shared work;
    # SPICE's parts (which read what the shared work leaves) only after all of it came back
    assert sent_before_shared == [("cider_d", 0), ("meteor", 0)]
    assert pool.sent == [
        ("cider_d", 0),
        ("meteor", 0),
        ("shared", "spice"),
        ("shared", "spice"),
        ("meteor", 4),
        ("spice", 0),
        ("spice", 4),
    ]
    assert sorted((m, s) for m, s, _ in collected) == sorted((m, s) for m, s, _ in tasks)
