"""The stop-word list of the coco-caption WMD scorer, shipped as a data file.

Spec: metric-spec §7. coco-caption's WMD removes NLTK's English list (153 words) before
computing distances; MEAN removes the same words so that both embedding metrics see the same
content words. Tokens such as ``'s``, ``n't`` or ``-lrb-`` are *not* in the list.
"""

from __future__ import annotations

import functools
from importlib.resources import files

#: package-relative location of the list (one word per line, ``#`` starts a comment line)
DATA_FILE = "data/wmd_stopwords.txt"


@functools.cache
def wmd_stopwords() -> frozenset[str]:
    """The 153 stop words coco-caption's WMD removes (metric-spec §7), read once per process.

    >>> sw = wmd_stopwords()
    >>> len(sw), "the" in sw, "'s" in sw, "horse" in sw
    (153, True, False, False)
    """
    text = (files("capeval_core") / DATA_FILE).read_text("utf-8")
    return frozenset(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


__all__ = ["DATA_FILE", "wmd_stopwords"]
