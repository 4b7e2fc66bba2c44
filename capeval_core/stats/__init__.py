"""Meta-evaluation statistics: correlations with humans, the Williams test, the combined
metric, pairwise and forced-choice accuracy, and spreadsheet-safe CSV export.

>>> from capeval_core.stats import williams_test
>>> round(williams_test(0.9, 0.8, 0.85, 100).statistic, 6)
4.126423
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capeval_core.stats.combined import (
        DEFAULT_COMBINATION,
        SubsetResult,
        combine,
        default_subset,
        minmax,
        rank_subsets,
    )
    from capeval_core.stats.correlation import (
        METHODS,
        MIN_N_FOR_PVALUE,
        ConfidenceInterval,
        CorrelationResult,
        bootstrap_many,
        bootstrap_statistics,
        correlate,
        kendall,
        pearson,
        pvalue_meaningful,
        spearman,
        system_level,
    )
    from capeval_core.stats.export import export_csv, safe_cell, to_csv_text
    from capeval_core.stats.pairwise import (
        ForcedChoiceResult,
        PairwiseAccuracyResult,
        forced_choice_accuracy,
        forced_choice_by_type,
        pairwise_accuracy,
        sample_references,
    )
    from capeval_core.stats.williams import (
        WilliamsMatrix,
        WilliamsResult,
        correlation_matrix,
        williams_between,
        williams_matrix,
        williams_test,
    )

__all__ = [
    "DEFAULT_COMBINATION",
    "METHODS",
    "MIN_N_FOR_PVALUE",
    "ConfidenceInterval",
    "CorrelationResult",
    "ForcedChoiceResult",
    "PairwiseAccuracyResult",
    "SubsetResult",
    "WilliamsMatrix",
    "WilliamsResult",
    "bootstrap_many",
    "bootstrap_statistics",
    "combine",
    "correlate",
    "correlation_matrix",
    "default_subset",
    "export_csv",
    "forced_choice_accuracy",
    "forced_choice_by_type",
    "kendall",
    "minmax",
    "pairwise_accuracy",
    "pearson",
    "pvalue_meaningful",
    "rank_subsets",
    "safe_cell",
    "sample_references",
    "spearman",
    "system_level",
    "to_csv_text",
    "williams_between",
    "williams_matrix",
    "williams_test",
]

#: the modules that define the names above, the one that needs no scipy first. A name is
#: imported on its first use (PEP 562): the statistics import scipy.stats (about a second),
#: which a command that only writes a CSV never needs.
_MODULES = ("export", "pairwise", "williams", "correlation", "combined")


def __getattr__(name: str) -> Any:
    if name in __all__:
        for module in _MODULES:
            found = importlib.import_module(f"{__name__}.{module}")
            if name in vars(found):
                globals()[name] = value = vars(found)[name]  # later reads skip this
                return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
