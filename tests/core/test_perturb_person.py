"""replace_person makes the caption false: a person word goes to one that contradicts it.

About 15% of edits left the caption true: man -> guy, man -> adult, man -> person,
woman -> lady, child <-> kid (the list mixed synonyms and broader words with contrasting ones).
"""

from __future__ import annotations

import pytest

from capeval_core.perturb import perturb, word_list

#: pairs that leave a caption true: synonyms, and a word replaced by a broader one
TRUE_PAIRS = {
    ("man", "guy"),
    ("man", "adult"),
    ("man", "person"),
    ("woman", "lady"),
    ("child", "kid"),
    ("kid", "child"),
    ("boy", "child"),
    ("girl", "kid"),
    ("guy", "man"),
    ("lady", "woman"),
    ("men", "people"),
    ("woman", "person"),
    ("surfer", "man"),
    ("man", "surfer"),
}


@pytest.mark.parametrize(("old", "new"), sorted(TRUE_PAIRS))
def test_no_replacement_leaves_the_caption_true(old: str, new: str) -> None:
    caption = f"a {old} stands on a beach with a {old}"
    for seed in range(40):
        p = perturb(caption, "replace_person", seed=seed, n=None)
        assert all((c.old, c.new) not in TRUE_PAIRS for c in p.changed), p.perturbed


def test_every_replacement_contradicts_the_word() -> None:
    from capeval_core.perturb import _contradicts, _entries

    said = {form: kinds for forms, kinds in _entries("person") for form in forms}
    for forms in word_list("person"):
        for form in forms:
            for seed in range(10):
                p = perturb(f"the {form} is here", "replace_person", seed=seed)
                for c in p.changed:
                    if c.old == form:
                        assert _contradicts(said[c.old], said[c.new]), (c.old, c.new)


@pytest.mark.parametrize(
    ("old", "contrasts"),
    [
        ("man", {"woman", "boy", "girl", "child", "lady", "baby"}),
        ("woman", {"man", "boy", "guy", "child"}),
        ("child", {"man", "woman", "adult"}),
        ("surfer", {"skier", "chef"}),
    ],
)
def test_contrasting_people_are_chosen(old: str, contrasts: set[str]) -> None:
    got = {
        perturb(f"a {old} on a beach", "replace_person", seed=s).changed[-1].new for s in range(60)
    }
    assert contrasts <= got


def test_a_word_nothing_contradicts_is_not_replaced() -> None:
    p = perturb("a person and some people on a beach", "replace_person")
    assert not p.is_changed
    assert p.note == (
        "nothing eligible: no person word that another of capeval's person words contradicts"
    )
