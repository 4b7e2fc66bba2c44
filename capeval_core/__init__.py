"""capeval: image-captioning metrics that match the references and show their evidence.

>>> from capeval_core import score
>>> round(score("rouge_l", ["a cat sits on a mat"], [["a cat is on a mat"]]).value, 4)
0.8333
"""

from capeval_core._version import __version__
from capeval_core.api import score, score_many
from capeval_core.errors import (
    CapevalError,
    CapevalWarning,
    DamagedCacheWarning,
    DegenerateCorpusWarning,
    InputError,
    JudgmentFormatError,
    MachineWarning,
    MissingResourceError,
    OptionError,
    ResourceError,
    UnknownKeyError,
)
from capeval_core.metrics import available_keys, get_metric
from capeval_core.results import MetricResult, SegmentScore, Signature
from capeval_core.tokenize import get_tokenizer

__all__ = [
    "CapevalError",
    "CapevalWarning",
    "DamagedCacheWarning",
    "DegenerateCorpusWarning",
    "InputError",
    "JudgmentFormatError",
    "MachineWarning",
    "MetricResult",
    "MissingResourceError",
    "OptionError",
    "ResourceError",
    "SegmentScore",
    "Signature",
    "UnknownKeyError",
    "__version__",
    "available_keys",
    "get_metric",
    "get_tokenizer",
    "score",
    "score_many",
]
