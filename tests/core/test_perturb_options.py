"""Small things of the perturbations' options and output."""

from __future__ import annotations

import pytest

from capeval_core.errors import InputError
from capeval_core.perturb import perturb


@pytest.mark.parametrize(
    ("caption", "expected"),
    [
        ("(the dog) is on it", "(dog)"),  # was "( dog) "
        ("a dog on the", "dog"),  # was "dog "
        ("a {the dog}", "{dog}"),
        ("  the dog , the cat .  ", "dog, cat."),
        ("(the) dog runs", "dog runs"),  # was "() dog runs": no brackets around nothing
        ("a dog [in the] park", "dog park"),  # was "dog [] park"
        ('dog "the" cat', "dog cat"),  # was 'dog "" cat'
        ("A dog in the U.S.", "dog U.S."),  # was "dog U..": "s" is a stop word
        ("A man at 3 p.m. on a bus.", "man 3 p.m. bus."),  # was "man 3 p.. bus."
    ],
)
def test_drop_stopwords_leaves_no_stray_space(caption: str, expected: str) -> None:
    assert perturb(caption, "drop_stopwords").perturbed == expected


@pytest.mark.parametrize("positions", [[True], [False, 1], [1.0]])
def test_synonym_positions_refuse_what_is_no_index(positions: list) -> None:
    """``positions=[True]`` was taken as word 1."""
    with pytest.raises(InputError, match="positions"):
        perturb("a child on a sofa", "synonym", positions=positions)


@pytest.mark.parametrize("length", [-1, 0, True, 1.5])
def test_redundant_length_is_checked_in_either_mode(length: object) -> None:
    """``length=-1`` passed without a word in "modifier" mode, which does not use it; it is
    checked as ``n`` is, whatever the mode."""
    for mode in ("modifier", "repeat"):
        with pytest.raises(InputError, match="length"):
            perturb("a man riding a wave", "redundant", mode=mode, length=length)


def test_redundant_modifier_takes_a_valid_length_it_does_not_use() -> None:
    """As "repeat" takes a valid ``n``: an option's value is checked, not its use."""
    caption = "a man riding a wave"
    with_length = perturb(caption, "redundant", length=3)
    assert with_length.perturbed == perturb(caption, "redundant").perturbed
    assert with_length.options == (("length", 3),)


@pytest.mark.parametrize("caption", ["holds 3.5 kg at 10:30", "a 3.5 mile road", "1,000 birds"])
def test_count_leaves_decimals_times_and_thousands(caption: str) -> None:
    """ "3.5" became "3.2" and "10:30" "6:30": digits joined by punctuation are no count."""
    p = perturb(caption, "count", seed=1, n=2)
    assert p.perturbed == caption and "nothing eligible" in p.note


def test_count_still_changes_a_count_beside_a_time() -> None:
    p = perturb("two dogs at 10:30", "count", seed=1)
    assert p.perturbed.endswith(" dogs at 10:30") and not p.perturbed.startswith("two ")


@pytest.mark.parametrize(
    ("caption", "name", "kept"),
    [
        ("The man's dog runs.", "replace_person", "'s dog runs."),
        ("the men\u2019s room", "replace_person", "\u2019s room"),
        ("A man's dog runs.", "object_swap", "man's "),
    ],
)
def test_a_listed_word_with_its_possessive_is_replaced_and_keeps_it(caption, name, kept):
    """ "The man's dog" was "no person word from capeval's list" though "man" is on it."""
    p = perturb(caption, name, seed=2)
    assert p.is_changed and kept in p.perturbed, p.perturbed
