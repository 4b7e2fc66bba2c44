"""Tests for the pure-Python emulation of coco-caption's PTBTokenizer (metric-spec §1).

The fast tests use a fixture table; the slow ones run the real Java tokenizer through
pycocoevalcap and compare every caption.
"""

from __future__ import annotations

import random
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capeval_core import ptb

# Expected values produced by pycocoevalcap 1.2 PTBTokenizer (Stanford CoreNLP 3.4.1 jar,
# OpenJDK 17), with all probes tokenized as ONE batch in this order: the last probes depend on
# the caption that follows them (cross-line context, metric-spec §1.3). Each expected value is
# the wrapper's output string for that caption.
PROBES: list[tuple[str, str]] = [
    ("The giraffe's neck is long.", "the giraffe 's neck is long"),
    (
        "I'm sure I'd go, you're right, we've seen it, they'll come.",
        "i 'm sure i 'd go you 're right we 've seen it they 'll come",
    ),
    ("A dog that doesn't bark.", "a dog that does n't bark"),
    ("I can't see it.", "i ca n't see it"),
    ("They won't leave.", "they wo n't leave"),
    ("It ain't over.", "it ai n't over"),
    ("Cats cannot fly.", "cats can not fly"),
    ("You gonna eat that?", "you gon na eat that"),
    (
        "I gotta go, wanna come? Lemme see, gimme that.",
        "i got ta go wan na come lem me see gim me that",
    ),
    ("'Tis the season, 'twas the night.", "'t is the season 't was the night"),
    ("I dunno, d'ya know?", "i dunno d'ya know"),
    ("Y'all come back.", "y' all come back"),
    ("It is five o'clock.", "it is five o'clock"),
    ("Rock 'n' roll music.", "rock 'n' roll music"),
    ("Fashion from the '90s.", "fashion from the '90s"),
    ("Wait 'til dark.", "wait 'til dark"),
    ("The 80's were fun.", "the 80 's were fun"),
    ("DON'T WALK", "do n't walk"),
    ("IT'S A CAT", "it 's a cat"),
    ("isn’t it’s don‘t", "is n't it 's do n`t"),
    ("it´s a dog", "it ´ s a dog"),
    ("don&apos;t go", "do n't go"),
    ("Let's ride.", "let 's ride"),
    ("The dogs' bowls.", "the dogs bowls"),
    ("ma'am and o'neil", "ma'am and o'neil"),
    ("l'eau and l'a", "l'eau and l' a"),
    ("A black-and-white photo.", "a black-and-white photo"),
    ("A man in a t-shirt.", "a man in a t-shirt"),
    ("An x-ray of a hand.", "an x-ray of a hand"),
    ("A 3-way stop.", "a 3-way stop"),
    ("Ages 6-8 only.", "ages 6-8 only"),
    ("pre- and post-war", "pre and post-war"),
    ("a---b c----d e-----f", "a b c d e ----- f"),
    ("wait -- what", "wait what"),
    ("a - b", "a b"),
    ("pro- and anti-war", "pro- and anti-war"),
    ("-5 degrees", "-5 degrees"),
    ("a -with b", "a with b"),
    ("It is 3.5 miles.", "it is 3.5 miles"),
    ("1,000,000 people", "1,000,000 people"),
    ("At 10:30 today", "at 10:30 today"),
    ("+3 and -5 and .5 and :30", "+3 and -5 and .5 and :30"),
    ("1/2 cup and 3/4 cup", "1/2 cup and 3/4 cup"),
    ("1 1/2 cups", "1\xa01/2 cups"),
    ("½ ¼ ¾ ⅓ ⅔ ⅕", "1/2 1/4 3/4 1/3 2/3 ⅕"),
    ("It costs $5.", "it costs $ 5"),
    ("50% off", "50 % off"),
    ("Number #1", "number # 1"),
    ("#abc and @me", "#abc and @me"),
    ("12 345 6789 and (555) 123-4567", "12\xa0345\xa06789 and -lrb-555-rrb-\xa0123-4567"),
    ("555-1234 and 12.345.6789", "555-1234 and 12.345.6789"),
    ("3-4.5 and 1.5-2", "3-4 .5 and 1.5-2"),
    ("1990s and 3rd and 4x4", "1990s and 3rd and 4x4"),
    ("12/25/2015 is a date", "12/25/2015 is a date"),
    ("US$ 5 and €5 and £3", "us$ 5 and $ 5 and # 3"),
    ("5¢ and ¥100", "5 cents and ¥ 100"),
    ("x² and H₂O", "x ² and h ₂ o"),
    ("A tub/shower combo.", "a tub/shower combo"),
    ("his/her car", "his/her car"),
    ("pow/mia flag", "pow/mia flag"),
    ("and/or a/b/c/d", "and/or a/b/c / d"),
    ("a 1/4-inch bolt", "a 1/4-inch bolt"),
    ("a / b", "a / b"),
    ("a\\/b", "a\\/b"),
    ("Mr. Smith and Mrs. Jones", "mr. smith and mrs. jones"),
    ("St. Louis, Ft. Worth and Mt. Hood", "st. louis ft. worth and mt. hood"),
    ("Made in the U.S.", "made in the u.s."),
    ("Things, e.g. apples, etc. and more", "things e.g. apples etc. and more"),
    ("At 9 a.m. sharp", "at 9 a.m. sharp"),
    ("The dept., the office", "the dept. the office"),
    ("A dog.a cat", "a dog.a cat"),
    ("the corner.4-5", "the corner.4-5"),
    ("Fig. 3 and No. 5", "fig. 3 and no. 5"),
    ("Jan. 5 and Calif. roads", "jan. 5 and calif. roads"),
    ("Acme Inc. The end", "acme inc. the end"),
    ("Acme Co. the end", "acme co. the end"),
    ("Wash. DC", "wash. dc"),
    ("Ph.D. student", "ph.d. student"),
    ("vs. the world", "vs. the world"),
    ("word.", "word"),
    ("word. . .", "word"),
    ("word. . . .", "word"),
    ("word...", "word"),
    ("word....", "word"),
    ("a.. b", "a. b"),
    ("end!!", "end !!"),
    ("what?!", "what ?!"),
    ("U.S. A man", "u.s. a man"),
    ("U.S. During the day", "u.s. during the day"),
    ('"Hello" he said.', "hello he said"),
    ('He said "$5".', "he said $ 5"),
    ("“Curly” quotes", "curly quotes"),
    ("‘Single’ quotes", "single quotes"),
    ("'quoted' words", "quoted words"),
    ("`back' quotes", "back quotes"),
    ("a s''mall bear", "a s mall bear"),
    ("``double'' quotes", "double quotes"),
    ("«French»", "french"),
    ("‹angle›", "angle"),
    ("„low“", "„ low"),
    ("‚low‘", "‚ low"),
    ("a ' b", "a b"),
    ("a '' b", "a b"),
    ("a ''' b", "a b"),
    ("’’ and ‘‘", "and"),
    ("“”", "``''"),
    ("a – b — c ― d", "a b c d"),
    ("wait… what", "wait what"),
    ("cats &amp; dogs", "cats & dogs"),
    ("AT&T and Q&A and AT&amp;T", "at&t and q&a and at&t"),
    ("&quot;hi&quot;", "hi"),
    ("&lt;tag&gt;", "< tag >"),
    ("c++ and C# and f#", "c++ and c# and f#"),
    ("a dog (really)", "a dog -lrb- really -rrb-"),
    ("a [big] dog", "a -lsb- big -rsb- dog"),
    ("a {curly} dog", "a -lcb- curly -rcb- dog"),
    ("a dog (really", "a dog -lrb- really"),
    (
        "happy :) sad :( wink ;) grin :D tongue :P",
        "happy :-rrb- sad :-lrb- wink ;-rrb- grin :d tongue :p",
    ),
    (":-) and :-(", ":--rrb- and :--lrb-"),
    ("<3 love", "< 3 love"),
    ("^_^ and -_- and (^_^)", "^_^ and -_- and -lrb-^_^-rrb-"),
    ("see http://www.google.com/x?y=1. now", "see http://www.google.com/x?y=1 now"),
    ("visit www.example.com today", "visit www.example.com today"),
    ("foo.com and 350.org", "foo.com and 350 org"),
    ("mail me@example.com, please", "mail me@example.com, please"),
    ("<a@b.c> x", "<a@b.c> x"),
    ("a.jpg and 0a.jpg", "a.jpg and 0a.jpg"),
    ("report.pdf. done", "report.pdf done"),
    ("x.txt, y.zip!", "x.txt y.zip"),
    ("  leading and trailing  ", "leading and trailing"),
    ("tab\tseparated", "tab separated"),
    ("non\xa0breaking", "non breaking"),
    ("em\u2003space", "em space"),
    ("zero\u200bwidth", "zero width"),
    ("soft\xadhyphen", "softhyphen"),
    ("\xad", ""),
    ("a\xad-b", "a-b"),
    ("1\xad2", "12"),
    ("weirdⅫchar", "weird char"),
    ("emoji 😀 here", "emoji here"),
    ("café naïve jalapeño", "café naïve jalapeño"),
    ("Élan vital", "élan vital"),
    ("ÉCOLE", "école"),
    ("straße", "straße"),
    ("İstanbul", "i̇stanbul"),
    ("ﬁnal ligature", "ﬁnal ligature"),
    ("", ""),
    ("   ", ""),
    ("...", ""),
    ("!!!", "!!!"),
    ("''", ""),
    # runs of dots: at most five make one "..."
    ("a ....... b and c ...... d", "a b and c d"),
    ("a . . . . . . b", "a b"),
    ("many diff’rent and diff'rent animals", "many diff 're nt and diff rent animals"),
    ("A dog with a P.", "a dog with a p"),
    ("A black cat sits.", "a black cat sits"),
    ("A man from a Model T.", "a man from a model t."),
    ("Four men stand.", "four men stand"),
    ("A store of Acme Co.", "a store of acme co."),
    ("The end.", "the end"),
    ("A sign for Acme Co.", "a sign for acme co."),
    ("the end.", "the end"),
    ("Made in the U.S.", "made in the u.s."),
    ("An apple.", "an apple"),
    ("Made in the U.K.", "made in the u.k."),
    ("apple.", "apple"),
]


def _mismatches(texts: list[str], expected: list[str], got: list[str]) -> list[str]:
    return [
        f"{text!r}: expected {want!r}, got {have!r}"
        for text, want, have in zip(texts, expected, got, strict=True)
        if want != have
    ]


def test_probes_match_the_jar() -> None:
    texts = [text for text, _ in PROBES]
    got = [" ".join(tokens) for tokens in ptb.tokenize_lines(texts)]
    bad = _mismatches(texts, [want for _, want in PROBES], got)
    assert not bad, "\n".join(bad)


# Character entities and combining marks, each a caption of its own batch. Expected values
# produced by pycocoevalcap 1.2 PTBTokenizer (Stanford CoreNLP 3.4.1 jar, OpenJDK 17): "&nbsp;"
# is a space, an accented vowel's entity a letter of its word, and a combining mark a letter of
# a WORD but not of a hyphenated THING (Java's [:letter:]), so it stands alone there.
ENTITIES_AND_MARKS: list[tuple[str, str]] = [
    ("A dog&nbsp;on the grass.", "a dog on the grass"),
    ("&nbsp;", ""),
    ("A man at a caf&eacute; table.", "a man at a caf&eacute; table"),
    ("A na&iuml;ve &Ouml;l sign", "a na&iuml;ve &ouml;l sign"),
    ("&uuml;ber-cool", "&uuml;ber cool"),
    ("o'&eacute;", "o &eacute;"),
    ("cafe\u0301-bar", "cafe\u0301 bar"),
    ("x-e\u0301", "x-e \u0301"),
    ("can't\u0301", "ca n't \u0301"),
    ("\uff11\uff12\u0301", "\uff11\uff12 \u0301"),
    ("e\u0308-mail", "e\u0308 mail"),
    # &amp; between capitals in any case, and Java's final sigma (across digits and hyphens)
    ("AT&AMP;T", "at&t"),
    ("O&Amp;UML", "o&uml"),
    ("1e10\u03a3", "1e10\u03c2"),
    ("\u0391\u03a3-\u0392", "\u03b1\u03c3-\u03b2"),
    # final sigma within the word Java's BreakIterator finds around it, not the whole token
    ("ΟΔΟΣ3-WAY", "οδος3-way"),
    ("aΣ-3b", "aς-3b"),
    ("ႠꙀ1e10-Σ", "ⴀꙁ1e10-σ"),
    ("WAYΣ@D", "wayς@d"),
    ("ªΣ2$β#ꙁ", "ªσ2 $ β #ꙁ"),
    ("Z!zZ$&カᴬひΣ0", "z!zz $ & カᴬひσ0"),
]


@pytest.mark.parametrize(("text", "want"), ENTITIES_AND_MARKS)
def test_entities_and_combining_marks_as_the_jar(text: str, want: str) -> None:
    """They were tokenized as "& nbsp", "caf & eacute" and "cafe\u0301-bar": every metric's
    value moved (a caption with "caf&eacute;" scored BLEU-4 0.86 where the jar gives 1)."""
    assert " ".join(ptb.tokenize_lines([text])[0]) == want


def test_raw_tokens_keep_punctuation_and_lower_case() -> None:
    assert ptb.raw_tokens(["A dog (really) isn't here."]) == [
        ("a", "dog", "-lrb-", "really", "-rrb-", "is", "n't", "here", ".")
    ]
    # The wrapper's punctuation list holds upper-case brackets only: "-lrb-" survives.
    assert ptb.tokenize_lines(["A dog (really)."]) == [("a", "dog", "-lrb-", "really", "-rrb-")]


def test_cross_line_context() -> None:
    # "P." before a sentence starter on the next line is split; "T." before "Four" is kept.
    captions = ["a dog with a P.", "A black cat", "a man from a Model T.", "Four men"]
    assert ptb.raw_tokens(captions) == [
        ("a", "dog", "with", "a", "p", "."),
        ("a", "black", "cat"),
        ("a", "man", "from", "a", "model", "t."),
        ("four", "men"),
    ]


@pytest.mark.parametrize(
    "texts",
    [
        [],
        [""],
        ["", "", ""],
        ["   ", "\t"],
        ["a\nb", "c"],
        ["a\rb", "c\r\nd", "e\u2028f", "g\u2029h", "i\x0bj", "k\x0cl", "m\x85n"],
        ["\r", "\n", "\u2028"],
    ],
)
def test_one_tuple_per_caption(texts: list[str]) -> None:
    assert len(ptb.tokenize_lines(texts)) == len(texts)
    assert len(ptb.raw_tokens(texts)) == len(texts)


def test_other_newlines_separate_tokens_within_a_caption() -> None:
    # The jar would print extra lines here (pycocoevalcap then misaligns the captions); we keep
    # each caption's tokens together.
    assert ptb.tokenize_lines(["a\rb", "c\u2028d", "e"]) == [("a", "b"), ("c", "d"), ("e",)]
    assert ptb.raw_tokens(["wait\x85"]) == [("wait", "...")]


def test_fast_path_agrees_with_the_rule_scanner() -> None:
    from capeval_core.resources import coco_captions

    captions = [caption.caption.replace("\n", " ") for caption in coco_captions("val")[:5000]]
    joined = "\n".join(captions)
    scanned = []
    start = 0
    for caption in captions:
        end = start + len(caption)
        scanned.append(tuple(token.lower() for token in ptb._scan(joined, start, end)))
        start = end + 1
    assert ptb.raw_tokens(captions) == scanned


_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)),
    max_size=40,
)
_TRICKY = st.sampled_from(
    ["", " ", "\n", "\r", "\r\n", "\u2028", "\x85", "\x00", "\u00ad", "\u00a0", ".", "'", '"',
     "P.", "Co.", "U.S.", "cannot", "http://a.b/c", "a@b.com", "x.com", "1 1/2", "(555) 123-4567"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_TEXT, _TRICKY, st.lists(_TRICKY).map("".join)), max_size=8))
def test_never_crashes_and_tokens_are_clean(texts: list[str]) -> None:
    for result in (ptb.tokenize_lines(texts), ptb.raw_tokens(texts)):
        assert len(result) == len(texts)
        for tokens in result:
            assert isinstance(tokens, tuple)
            for token in tokens:
                assert token
                assert " " not in token
                assert "\n" not in token


# ---------------------------------------------------------------------------------------------
# Oracle comparisons with the Java tokenizer (slow; need `java` on PATH).
# ---------------------------------------------------------------------------------------------

needs_java = pytest.mark.skipif(
    shutil.which("java") is None, reason="`java` is not on PATH: cannot run the CoreNLP jar"
)


def _java_tokenize(captions: list[str]) -> list[str]:
    """One call of pycocoevalcap's wrapper, one image per caption, in order."""
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    result = PTBTokenizer().tokenize({i: [{"caption": c}] for i, c in enumerate(captions)})
    return [result[i][0] for i in range(len(captions))]


def _ours(captions: list[str]) -> list[str]:
    return [" ".join(tokens) for tokens in ptb.tokenize_lines(captions)]


@pytest.mark.slow
@needs_java
def test_probes_through_java() -> None:
    texts = [text for text, _ in PROBES]
    java = _java_tokenize(texts)
    bad = _mismatches(texts, [want for _, want in PROBES], java)
    assert not bad, "the fixture table is out of date:\n" + "\n".join(bad)


@pytest.mark.slow
@needs_java
def test_all_coco_val_captions_match_java() -> None:
    from capeval_core.resources import coco_captions

    captions = [caption.caption for caption in coco_captions("val")]
    assert len(captions) == 202_654
    bad = _mismatches(captions, _java_tokenize(captions), _ours(captions))
    assert not bad, f"{len(bad)} of {len(captions)} captions differ:\n" + "\n".join(bad[:50])


_GREEK_PIECES = [
    *"ΣΣΣΣΣΑΒΓΔΟσςαβaAzZwW0123.',\"-_#$%&¢@/", " ", " ", "\t", "\u0301", "\u20dd", "\u200d",
    "\u00ad", "\u0903", "中", "カ", "ひ", "ª", "ʰ", "Ⅰ", "ⓐ", "\U0001d400", "\U0001d7cf", "٫",
    "\u2027", "\xa0", "ǅ", "Ⴀ", "ͺ", "…", "€", "½", "ᴬ", ":", "!", "(", "1e10", "ΟΔΟΣ", ".com",
    "@x.org", "n't", "'s",
]  # fmt: skip


@pytest.mark.slow
@needs_java
def test_greek_captions_lower_case_as_java() -> None:
    """The jar lower-cases each token with Java's String.toLowerCase, whose final sigma
    depends on the word its BreakIterator finds around the sigma."""
    rng = random.Random(20)
    captions = []
    for _ in range(3000):
        text = "".join(rng.choice(_GREEK_PIECES) for _ in range(rng.randint(1, 14)))
        k = rng.randint(0, len(text))
        captions.append(text[:k] + "Σ" + text[k:])
    bad = _mismatches(captions, _java_tokenize(captions), _ours(captions))
    assert not bad, f"{len(bad)} of {len(captions)} captions differ:\n" + "\n".join(bad[:50])


_INSERTS = [
    ",", ".", ";", ":", "!", "?", "...", "…", "-", "--", "—", "–", "(", ")", "[", "]", "{", "}",
    '"', "'", "`", "‘", "’", "“", "”", "/", "&", "&amp;", "$", "%", "#", "@", "*", "+", "=",
    "<", ">", "|", "~", "^", "_", "''", "``", "!!", "?!", "....", ". . .",
]  # fmt: skip
_WORDS = [
    "Mr.", "Dr.", "St.", "U.S.", "e.g.", "i.e.", "etc.", "a.m.", "Jan.", "Inc.", "Co.", "vs.",
    "No. 5", "Fig. 3", "Mrs.", "Ft.", "Mt.", "Calif.", "Jr.", "P.", "T.", "U.K.", "dept.,",
    "don't", "can't", "won't", "it's", "I'm", "they're", "we've", "you'll", "he'd", "cannot",
    "gonna", "wanna", "y'all", "o'clock", "rock 'n' roll", "'90s", "ma'am", "isn’t", "it’s",
    "dogs'", "'tis", "'til", "ain't", "o'neil", "l'eau", "DON'T",
    "3", "3.5", "1,000", "10:30", "1/2", "1 1/2", "½", "$5", "50%", "#1", "2-3", "-5", "+3",
    "555-1234", "(555) 123-4567", "1990s", "80's", "3rd", "4x4", "12 345 6789",
    "café", "naïve", "jalapeño", "crème brûlée", "Zoë", "résumé", "São Paulo", "façade",
    "www.example.com", "http://example.com/a", "john@example.com", "350.org", "#tag", "@user",
    "photo.jpg", "t-shirt", "black-and-white", "x-ray", "pre-", "anti-war", "c++", "AT&T",
    ":)", ":-(", ";)", ":D", "<3", "^_^", "tub/shower", "and/or", "1/4-inch", "'em", "'cause",
]  # fmt: skip
_WRAPS = [('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"), ("(", ")"), ("[", "]"), ("`", "'"),
          ("``", "''"), ("«", "»"), ("—", "—"), ("*", "*"), ("<b>", "</b>")]  # fmt: skip
_ODD_CHARS = "éèüñçøåßÉ’‘“”–—…\u00a0\u00ad"


def _adversarial_captions(captions: list[str], count: int, seed: int) -> list[str]:
    """COCO captions with case changes, dropped final periods and inserted trouble."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        words = rng.choice(captions).split() or [""]
        case = rng.random()
        if case < 0.4:
            words = [word.lower() for word in words]
        elif case < 0.45:
            words = [word.upper() for word in words]
        elif case < 0.55:
            words = [word.capitalize() for word in words]
        if rng.random() < 0.5 and words[-1].endswith("."):
            words[-1] = words[-1][:-1]
        for _ in range(rng.randint(0, 4)):
            kind = rng.random()
            i = rng.randrange(len(words))
            word = words[i]
            if kind < 0.3:
                mark = rng.choice(_INSERTS)
                where = rng.randrange(len(word) + 1)
                words[i] = word[:where] + mark + word[where:]
            elif kind < 0.7:
                words.insert(i, rng.choice(_WORDS))
            elif kind < 0.85:
                left, right = rng.choice(_WRAPS)
                words[i] = left + word + right
            elif word:
                where = rng.randrange(len(word))
                words[i] = word[:where] + rng.choice(_ODD_CHARS) + word[where + 1 :]
        separator = " " if rng.random() < 0.9 else rng.choice(["  ", " \t", "\u00a0"])
        text = separator.join(words)
        if rng.random() < 0.1:
            text += rng.choice([" ", ".", " .", "!", "?", "...", " P.", " a.", " Co.", " U.S."])
        out.append(text)
    return out


@pytest.mark.slow
@needs_java
def test_entities_and_combining_marks_table_through_java() -> None:
    texts = [text for text, _ in ENTITIES_AND_MARKS]
    java = [_java_tokenize([text])[0] for text in texts]
    bad = _mismatches(texts, [want for _, want in ENTITIES_AND_MARKS], java)
    assert not bad, "the fixture table is out of date:\n" + "\n".join(bad)


_ENTITIES = ["&nbsp;", "&NBSP;", "&eacute;", "&Eacute;", "&egrave;", "&uuml;", "&Ouml;", "&iacute;",
             "&aUml;", "&amp;", "&quot;", "&apos;", "&lt;", "&gt;", "&mdash;", "&#39;", "&yacute;",
             "&ntilde;", "&nbsp", "&eacute"]  # fmt: skip
_MARKS = ["\u0301", "\u0300", "\u0308", "\u0327", "\u0303", "\u02c6", "\u093c", "\u05b7"]
_GLUE = ["-", "'", "\u2019", "", "", " ", ".", "n't", "'s", "1", "-x", "x-"]


@pytest.mark.slow
@needs_java
def test_captions_with_entities_and_combining_marks_match_java() -> None:
    """COCO captions with HTML entities and combining marks put inside words, next to hyphens,
    apostrophes and digits (3,167 of these 6,000 differed before the entities and Java's
    [:letter:] were followed)."""
    from capeval_core.resources import coco_captions

    rng = random.Random(7)
    base = [caption.caption for caption in coco_captions("val")[:3000]]
    captions = []
    for _ in range(6000):
        words = rng.choice(base).split()
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(words))
            where = rng.randrange(len(words[i]) + 1)
            insert = rng.choice(_ENTITIES) if rng.random() < 0.5 else rng.choice(_MARKS)
            if rng.random() < 0.6:
                insert = rng.choice(_GLUE) + insert + rng.choice(_GLUE)
            words[i] = words[i][:where] + insert + words[i][where:]
        captions.append(" ".join(words))
    bad = _mismatches(captions, _java_tokenize(captions), _ours(captions))
    assert not bad, f"{len(bad)} disagreements:\n" + "\n".join(bad[:50])


@pytest.mark.slow
@needs_java
def test_adversarial_captions_match_java() -> None:
    from capeval_core.resources import coco_captions

    base = [caption.caption for caption in coco_captions("val")[:5000]]
    captions = _adversarial_captions(base, 5000, seed=20240601)
    bad = _mismatches(captions, _java_tokenize(captions), _ours(captions))
    # Agreement must be at least 99.9 %; every disagreement is listed.
    assert len(bad) <= len(captions) // 1000, f"{len(bad)} disagreements:\n" + "\n".join(bad)
