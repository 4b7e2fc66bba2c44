"""What capeval finds on this machine: the resource inventory that ``capeval info`` and the
app's Home page show, and what the next scoring run has to load or build first.

It looks at every resource (COCO captions, METEOR's files, SPICE's grammar and shipped
parses, word vectors), so it sits above the modules that own them; :mod:`.resources` below
them only locates files and the cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from capeval_core import resources
from capeval_core.errors import CapevalError, MissingResourceError, ResourceError


@dataclass(frozen=True)
class ResourceInfo:
    """One line of the resource inventory the app's Home page and ``capeval info`` show."""

    name: str
    available: bool
    version: str
    detail: str
    #: only an opt-in feature needs it: its absence is news, not a fault
    optional: bool = False


def inventory() -> list[ResourceInfo]:
    """What capeval can find on this machine, without loading anything heavy."""
    import platform

    from capeval_core._version import __version__

    items = [
        ResourceInfo("capeval", True, __version__, f"Python {platform.python_version()}"),
    ]
    version = resources.package_version("pycocoevalcap")
    for label, rel in (
        ("COCO 2014 captions", "spice/spice-1.0.jar"),
        ("METEOR 1.5 resources", "meteor/meteor-1.5.jar"),
        ("METEOR paraphrase table", "meteor/data/paraphrase-en.gz"),
    ):
        try:
            path = resources.pycocoevalcap_file(rel)
            items.append(
                ResourceInfo(label, True, f"pycocoevalcap {version}", f"{rel} ({_size(path)})")
            )
        except MissingResourceError as exc:
            items.append(ResourceInfo(label, False, "", str(exc)))
    items.append(_corenlp_models())
    try:
        items.append(ResourceInfo("cache directory", True, "", str(resources.cache_dir())))
    except OSError as exc:
        items.append(ResourceInfo("cache directory", False, "", f"not writable: {exc}"))
    return items


def first_use_pending() -> list[str]:
    """What the next scoring run has to load or build first (empty once everything is warm).

    METEOR's paraphrase index is built once per machine into the user cache; its synonym and
    paraphrase resources, and the default word vectors of WMD and MEAN, load once per
    process. Reads the process caches without filling them, so it never raises and costs
    nothing; a resource that is missing altogether is left for the metric to report.

    >>> all(isinstance(what, str) for what in first_use_pending())
    True
    """
    from capeval_core import embeddings, meteor_resources

    pending = []
    try:
        if not meteor_resources.paraphrase_index_path().is_file():
            pending.append(
                "writing METEOR's paraphrase index once into the user cache "
                "(about a second from the shipped index, only the very first time on this "
                "machine)"
            )
        elif not meteor_resources.meteor_synsets.cache_info().currsize:
            pending.append("opening METEOR's synonym and paraphrase resources")
    except (AttributeError, CapevalError, OSError):
        pass  # a missing resource is reported by the metric itself
    try:
        if not embeddings.default_embeddings.cache_info().currsize:
            pending.append("loading the GloVe 6B 50-d word vectors for WMD and MEAN (a few s)")
    except AttributeError:
        pass  # replaced by something without a process cache: nothing to announce
    return pending


def _corenlp_models() -> ResourceInfo:
    """SPICE's parser data: CoreNLP 3.6.0's grammar and the COCO parses the package ships."""
    from capeval_core.spice.pcfg.grammar import shipped_paths, shipped_source
    from capeval_core.spice.shipped import shipped_kept, shipped_sets

    label = "SPICE parser (CoreNLP 3.6.0 PCFG)"
    try:
        source = shipped_source()
        sets = shipped_sets()
        read = [shipped_kept(s) for s in sets]
    except (MissingResourceError, ResourceError) as exc:
        return ResourceInfo(label, False, "", str(exc))
    arrays, _ = shipped_paths()
    parsed = ", ".join(
        f"{s.header['source']} ({len(s):,} captions{'' if kept else ', turned off'})"
        for s, kept in zip(sets, read, strict=True)
    )
    detail = f"shipped: grammar {arrays.name} ({_size(arrays)}); parsed: {parsed or 'none'}"
    return ResourceInfo(label, True, source["stamp"], detail)


def _size(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.1f} MB"
