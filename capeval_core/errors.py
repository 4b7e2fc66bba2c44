"""The CapevalError family and the warning classes for degenerate but valid input."""

from __future__ import annotations


class CapevalError(Exception):
    """Base class of every error capeval raises on purpose."""


class InputError(CapevalError, ValueError):
    """The caller passed data of the wrong shape or content."""


class OptionError(InputError):
    """An option (of a metric, tokenizer, loader or command) has a value it does not allow;
    the message names the option and the allowed values."""


class JudgmentFormatError(InputError):
    """A human-judgment file is malformed; the message names the file, line/row and column."""


class ResourceError(CapevalError):
    """A resource exists but could not be read (corrupt, wrong format)."""


class MissingResourceError(ResourceError, FileNotFoundError):
    """A resource is not installed; the message says how to provide it."""


class UnknownKeyError(CapevalError, KeyError):
    """A metric or tokenizer key that no registry knows."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else ""


class CapevalWarning(UserWarning):
    """Base class of capeval's warnings."""


class DegenerateCorpusWarning(CapevalWarning):
    """The input is valid but makes a metric uninformative (e.g. CIDEr-D on one image)."""


class MachineWarning(CapevalWarning):
    """Said of this machine (its CPUs, its caches), not of the data or the options: a JSON
    report leaves it out, so that the same run reads the same on any machine."""


class DamagedCacheWarning(MachineWarning):
    """A cache entry failed its checks when read; it was discarded and is being rebuilt."""


class CacheNotWrittenWarning(MachineWarning):
    """A cache entry could not be written (a read-only or full cache folder): the numbers
    stand, computed again by the next run."""


class ItemsLeftOutWarning(CapevalWarning):
    """A metric could not score some items (a limit the user set, a caption its parser
    refuses): their values are missing with the reason, every other item is scored."""


def refuse_text(value: object, name: str, what: str) -> None:
    """Refuse one text where a list is expected: iterated, it gave one item per character
    ("unknown metric 'b'", references of one letter each).

    >>> refuse_text(["bleu_4"], "keys", "metric keys")
    >>> refuse_text("bleu_4", "keys", "metric keys")
    Traceback (most recent call last):
    capeval_core.errors.InputError: `keys` must be a list of metric keys, not one text ('bleu_4')
    """
    if isinstance(value, str | bytes):
        raise InputError(f"`{name}` must be a list of {what}, not one text ({value!r})")
