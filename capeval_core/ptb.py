"""Pure-Python emulation of the tokenizer coco-caption runs (metric-spec §1).

coco-caption (pycocoevalcap 1.2) pipes the captions, joined with newlines, through the Stanford
CoreNLP 3.4.1 ``PTBTokenizer`` jar (``-preserveLines -lowerCase``) and drops 17 punctuation
tokens. Every BLEU/METEOR/ROUGE-L/CIDEr number depends on those tokens, so this module reproduces
them without Java: a JFlex-style longest-match scanner over the ordered rules of metric-spec
§1.3, run over the whole batch because some rules look into the next caption.

Where the jar disagreed with the spec's rule table, the jar won; those spots say "measured" (a
few rules the table lacks: FILENAME, ASIANSMILEY, SUBSUPNUM, <...> around e-mail addresses).
Known residual differences: the character tables cover the Basic Multilingual Plane only (the
jar sees other characters as two UTF-16 halves; this only matters for counted repetitions); a
caption containing "\r", U+2028, U+2029, U+000B or U+000C makes pycocoevalcap misalign its
captions, which we do not reproduce (see raw_tokens); an SGML tag whose quoted attribute spans
two captions is cut at the caption boundary; phone numbers, URLs and SGML with exotic shapes
were checked on random samples only.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from capeval_core.java_lower import java_lower

__all__ = ["PUNCTUATION", "raw_tokens", "tokenize_lines"]

#: Tokens pycocoevalcap's wrapper removes (exact, case-sensitive comparison; metric-spec §1.1).
#: The tokenizer lower-cases its output first, so "-lrb-" and friends are *not* removed.
PUNCTUATION = frozenset(
    ["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-", "--",
     "...", ";"]
)  # fmt: skip

# ---------------------------------------------------------------------------------------------
# Character classes (metric-spec §1.3). LETTER and DIGIT are the jar's own tables, measured by
# running it on every BMP character (its JDK's Unicode 6 letters plus CoreNLP's extra list of
# combining marks), so they do not drift with Python's Unicode version. Ranges are hexadecimal.
# ---------------------------------------------------------------------------------------------

_LETTER_RANGES = """
    0041-005A 0061-007A 00AA 00B5 00BA 00C0-00D6 00D8-00F6 00F8-037D 0384-0386 0388-038A 038C
    038E-03A1 03A3-0481 0483-0487 048A-0527 0531-0556 0559-055F 0561-0587 0591-05BD 05BF
    05C1-05C2 05C4-05C5 05C7 05D0-05EA 05F0-05F2 0615-061A 0620-065E 066E-06D3 06D5-06EF
    06FA-06FF 070F-07B1 07CA-07F5 07FA 0800-0815 081A 0824 0828 0840-0858 08A0 08A2-08AC
    0900-0939 093C-094E 0950-0955 0958-0963 0971-0977 0979-097F 0981-0983 0985-098C 098F-0990
    0993-09A8 09AA-09B0 09B2 09B6-09B9 09BC-09C4 09C7-09C8 09CB-09CE 09D7 09DC-09DD 09DF-09E3
    09F0-09F1 0A01-0A03 0A05-0A0A 0A0F-0A10 0A13-0A28 0A2A-0A30 0A32-0A33 0A35-0A36 0A38-0A39
    0A3C 0A3E-0A4F 0A59-0A5C 0A5E 0A72-0A74 0A81-0A83 0A85-0A8D 0A8F-0A91 0A93-0AA8 0AAA-0AB0
    0AB2-0AB3 0AB5-0AB9 0ABC-0AD0 0AE0-0AE1 0B05-0B0C 0B0F-0B10 0B13-0B28 0B2A-0B30 0B32-0B33
    0B35-0B39 0B3D 0B5C-0B5D 0B5F-0B61 0B71 0B82-0B83 0B85-0B8A 0B8E-0B90 0B92-0B95 0B99-0B9A
    0B9C 0B9E-0B9F 0BA3-0BA4 0BA8-0BAA 0BAE-0BB9 0BBE-0BC2 0BC6-0BC8 0BCA-0BCD 0BD0 0C01-0C03
    0C05-0C0C 0C0E-0C10 0C12-0C28 0C2A-0C33 0C35-0C39 0C3D-0C56 0C58-0C59 0C60-0C61 0C85-0C8C
    0C8E-0C90 0C92-0CA8 0CAA-0CB3 0CB5-0CB9 0CBD 0CDE 0CE0-0CE1 0CF1-0CF2 0D05-0D0C 0D0E-0D10
    0D12-0D3A 0D3D-0D44 0D46-0D48 0D4E 0D60-0D61 0D7A-0D7F 0D85-0D96 0D9A-0DB1 0DB3-0DBB 0DBD
    0DC0-0DC6 0E01-0E3A 0E40-0E4E 0E81-0E82 0E84 0E87-0E88 0E8A 0E8D 0E94-0E97 0E99-0E9F
    0EA1-0EA3 0EA5 0EA7 0EAA-0EAB 0EAD-0EBD 0EC0-0EC4 0EC6 0EC8-0ECD 0EDC-0EDF 0F00 0F40-0F47
    0F49-0F6C 0F88-0F8C 1000-102A 103F 1050-1055 105A-105D 1061 1065-1066 106E-1070 1075-1081
    108E 10A0-10C5 10C7 10CD 10D0-10FA 10FC-1248 124A-124D 1250-1256 1258 125A-125D 1260-1288
    128A-128D 1290-12B0 12B2-12B5 12B8-12BE 12C0 12C2-12C5 12C8-12D6 12D8-1310 1312-1315
    1318-135A 1380-138F 13A0-13F4 1401-166C 166F-167F 1681-169A 16A0-16EA 1700-170C 170E-1711
    1720-1731 1740-1751 1760-176C 176E-1770 1780-17B3 17D7 17DC 1820-1877 1880-18A8 18AA
    18B0-18F5 1900-191C 1950-196D 1970-1974 1980-19AB 19C1-19C7 1A00-1A16 1A20-1A54 1AA7
    1B05-1B33 1B45-1B4B 1B83-1BA0 1BAE-1BAF 1BBA-1BE5 1C00-1C23 1C4D-1C4F 1C5A-1C7D 1CE9-1CEC
    1CEE-1CF1 1CF5-1CF6 1D00-1DBF 1E00-1F15 1F18-1F1D 1F20-1F45 1F48-1F4D 1F50-1F57 1F59 1F5B
    1F5D 1F5F-1F7D 1F80-1FB4 1FB6-1FBC 1FBE 1FC2-1FC4 1FC6-1FCC 1FD0-1FD3 1FD6-1FDB 1FE0-1FEC
    1FF2-1FF4 1FF6-1FFC 2071 207F 2090-209C 2102 2107 210A-2113 2115 2119-211D 2124 2126 2128
    212A-212D 212F-2139 213C-213F 2145-2149 214E 2183-2184 2C00-2C2E 2C30-2C5E 2C60-2CE4
    2CEB-2CEE 2CF2-2CF3 2D00-2D25 2D27 2D2D 2D30-2D67 2D6F 2D80-2D96 2DA0-2DA6 2DA8-2DAE
    2DB0-2DB6 2DB8-2DBE 2DC0-2DC6 2DC8-2DCE 2DD0-2DD6 2DD8-2DDE 2E2F 3005-3006 3031-3035
    303B-303C 3041-3096 309D-309F 30A1-30FA 30FC-30FF 3105-312D 3131-318E 31A0-31BA 31F0-31FF
    3400-4DB5 4E00-9FCC A000-A48C A4D0-A4FD A500-A60C A610-A61F A62A-A62B A640-A66E A67F-A697
    A6A0-A6E5 A717-A71F A722-A788 A78B-A78E A790-A793 A7A0-A7AA A7F8-A801 A803-A805 A807-A80A
    A80C-A822 A840-A873 A882-A8B3 A8F2-A8F7 A8FB A90A-A925 A930-A946 A960-A97C A984-A9B2 A9CF
    AA00-AA28 AA40-AA42 AA44-AA4B AA60-AA76 AA7A AA80-AAAF AAB1 AAB5-AAB6 AAB9-AABD AAC0 AAC2
    AADB-AADD AAE0-AAEA AAF2-AAF4 AB01-AB06 AB09-AB0E AB11-AB16 AB20-AB26 AB28-AB2E ABC0-ABE2
    AC00-D7A3 D7B0-D7C6 D7CB-D7FB F900-FA6D FA70-FAD9 FB00-FB06 FB13-FB17 FB1D FB1F-FB28
    FB2A-FB36 FB38-FB3C FB3E FB40-FB41 FB43-FB44 FB46-FBB1 FBD3-FD3D FD50-FD8F FD92-FDC7
    FDF0-FDFB FE70-FE74 FE76-FEFC FF21-FF3A FF41-FF5A FF66-FFBE FFC2-FFC7 FFCA-FFCF FFD2-FFD7
    FFDA-FFDC
"""

# The characters of _LETTER_RANGES that are not Java's [:letter:]: CoreNLP's extra list for
# WORD (combining marks, modifier symbols, ...), measured on the jar ("a-" + char + "b" stays
# one THING token exactly for [:letter:]). THING, APOWORD and APOWORD2's context take
# [:letter:] alone, so "cafe\u0301-bar" is "cafe\u0301", "-", "bar" there.
_NOT_JAVA_LETTER_RANGES = """
    02C2-02C5 02D2-02DF 02E5-02EB 02ED 02EF-036F 0375 0378-0379 0384-0385 03F6 0483-0487
    055A-055F 0591-05BD 05BF 05C1-05C2 05C4-05C5 05C7 0615-061A 064B-065E 0670 06D6-06E4
    06E7-06ED 06FD-06FE 070F 0711 0730-074C 07A6-07B0 07EB-07F3 0900-0903 093C 093E-094E
    0951-0955 0962-0963 0981-0983 09BC 09BE-09C4 09C7-09C8 09CB-09CD 09D7 09E2-09E3 0A01-0A03
    0A3C 0A3E-0A4F 0A81-0A83 0ABC 0ABE-0ACF 0B82 0BBE-0BC2 0BC6-0BC8 0BCA-0BCD 0C01-0C03
    0C3E-0C56 0D3E-0D44 0D46-0D48 0E31 0E34-0E3A 0E47-0E4E 0EB1 0EB4-0EBC 0EC8-0ECD
"""

# Upper-case letters (the jar's [:uppercase:], used after abbreviations, rule 29). "/2" marks a
# range of every other character (alternating upper/lower case blocks).
_UPPER_RANGES = """
    0041-005A 00C0-00D6 00D8-00DE 0100-0136/2 0139-0147/2 014A-0178/2 0179-017D/2 0181-0182
    0184-0186/2 0187-0189/2 018A-018B 018E-0191 0193-0194 0196-0198 019C-019D 019F-01A0
    01A2-01A6/2 01A7-01A9/2 01AC-01AE/2 01AF-01B1/2 01B2-01B3 01B5-01B7/2 01B8 01BC 01C4 01C7
    01CA 01CD-01DB/2 01DE-01EE/2 01F1 01F4-01F6/2 01F7-01F8 01FA-0232/2 023A-023B 023D-023E
    0241-0243/2 0244-0246 0248-024E/2 0370-0372/2 0376 0386-0388/2 0389-038A 038C-038E/2
    038F-0391/2 0392-03A1 03A3-03AB 03CF 03D2-03D4 03D8-03EE/2 03F4 03F7-03F9/2 03FA 03FD-042F
    0460-0480/2 048A-04C0/2 04C1-04CD/2 04D0-0526/2 0531-0556 10A0-10C5 10C7 10CD 1E00-1E94/2
    1E9E-1EFE/2 1F08-1F0F 1F18-1F1D 1F28-1F2F 1F38-1F3F 1F48-1F4D 1F59-1F5F/2 1F68-1F6F
    1FB8-1FBB 1FC8-1FCB 1FD8-1FDB 1FE8-1FEC 1FF8-1FFB 2102 2107 210B-210D 2110-2112 2115
    2119-211D 2124-212A/2 212B-212D 2130-2133 213E-213F 2145 2160-216F 2183 24B6-24CF
    2C00-2C2E 2C60-2C62/2 2C63-2C64 2C67-2C6D/2 2C6E-2C70 2C72 2C75 2C7E-2C80 2C82-2CE2/2
    2CEB-2CED/2 2CF2 A640-A66C/2 A680-A696/2 A722-A72E/2 A732-A76E/2 A779-A77D/2 A77E-A786/2
    A78B-A78D/2 A790-A792/2 A7A0-A7AA/2 FF21-FF3A
"""

_DIGIT_RANGES = """
    0030-0039 0660-0669 06F0-06F9 07C0-07C9 0966-096F 09E6-09EF 0A66-0A6F 0AE6-0AEF 0B66-0B6F
    0BE6-0BEF 0C66-0C6F 0CE6-0CEF 0D66-0D6F 0E50-0E59 0ED0-0ED9 0F20-0F29 1040-1049 1090-1099
    17E0-17E9 1810-1819 1946-194F 19D0-19D9 1A80-1A89 1A90-1A99 1B50-1B59 1BB0-1BB9 1C40-1C49
    1C50-1C59 A620-A629 A8D0-A8D9 A900-A909 A9D0-A9D9 AA50-AA59 ABF0-ABF9 FF10-FF19
"""


def _class_char(code: int) -> str:
    char = chr(code)
    return "\\" + char if char in "\\[]^-" else char


def _codes(ranges: str) -> list[int]:
    """The code points of "0041-005A 00AA 0100-0104/2 ..." ("/2": every other one)."""
    out: list[int] = []
    for item in ranges.split():
        span, _, step = item.partition("/")
        lo, _, hi = span.partition("-")
        out.extend(range(int(lo, 16), int(hi or lo, 16) + 1, 2 if step else 1))
    return out


def _class_body(ranges: str, without: str = "") -> str:
    """The body of a regex character class of ``ranges`` less the code points of ``without``."""
    drop = set(_codes(without))
    codes = [c for c in _codes(ranges) if c not in drop]
    parts = []
    for _, run in itertools.groupby(enumerate(codes), key=lambda pair: pair[1] - pair[0]):
        block = [code for _, code in run]
        lo, hi = block[0], block[-1]
        parts.append(_class_char(lo) if lo == hi else f"{_class_char(lo)}-{_class_char(hi)}")
    return "".join(parts)


_LETTER = _class_body(_LETTER_RANGES)
_UPPER = _class_body(_UPPER_RANGES)
_DIGIT = _class_body(_DIGIT_RANGES)
_JAVA_LETTER = _class_body(_LETTER_RANGES, without=_NOT_JAVA_LETTER_RANGES)
L = f"[{_JAVA_LETTER}]"  # the jar's [:letter:]
D = f"[{_DIGIT}]"
LD = f"[{_JAVA_LETTER}{_DIGIT}]"
# Inside WORD (rules 8, 10, 36) the soft hyphen also counts as a letter; every token loses its
# soft hyphens in the end (_remove_soft_hyphens).
_WORD_LETTER = _LETTER + "\u00ad"
# An accented vowel written as an entity is a letter of a word, kept as written (the jar's
# SPLET): "caf&eacute;" is one token. "&nbsp;" is a space (rule 64).
SPLET = "&[aeiouAEIOU](?i:acute|grave|uml);"
WL = f"(?:[{_WORD_LETTER}]|{SPLET})"
WLD = f"(?:[{_WORD_LETTER}{_DIGIT}]|{SPLET})"
_SPACE = " \t\u00a0\u2000-\u200a\u3000"
_NEWLINE = "\n\r\u2028\u2029\u000b\u000c\u0085"
SPACE = f"[{_SPACE}]"
SPACENL = f"[{_SPACE}{_NEWLINE}]"
# ´ (U+00B4) is not an apostrophe for 3.4.1 (`it´s` stays three tokens), unlike later releases.
_APOS_CHARS = "'\u0092\u2019"
APOS = f"(?:[{_APOS_CHARS}]|&apos;)"
_APOSETC_CHARS = _APOS_CHARS + "`\u0091\u2018\u201b"
APOSETC = f"(?:[{_APOSETC_CHARS}]|&apos;)"


def _ci(pattern: str) -> str:
    """JFlex ``%caseless``: letters written outside ``[...]`` match either case.

    Character classes stay case-sensitive, which is how the spec's ``[A]z`` (only "Az"/"AZ")
    is written. Everything else in ``pattern`` is regex syntax and passes through unchanged.
    """
    out = []
    in_class = False
    escaped = False
    for ch in pattern:
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == "\\":
            out.append(ch)
            escaped = True
        elif in_class:
            out.append(ch)
            in_class = ch != "]"
        elif ch == "[":
            out.append(ch)
            in_class = True
        elif ch.isascii() and ch.isalpha():
            out.append(f"[{ch.lower()}{ch.upper()}]")
        else:
            out.append(ch)
    return "".join(out)


def _words(*words: str) -> str:
    """A caseless alternation of words, longest first (Python's `|` is first-match, not longest)."""
    return "(?:" + "|".join(_ci(w) for w in sorted(words, key=len, reverse=True)) + ")"


WORD = f"{WL}{WLD}*(?:[.!?]{WL}{WLD}*)*"
REDAUX = f"{APOS}(?:[msdMSD]|{_ci('re')}|{_ci('ve')}|{_ci('ll')})"
SREDAUX = f"[nN]{APOSETC}[tT]"
ACRO = r"[A-Za-z](?:\.[A-Za-z])*"
ACRO2 = r"[A-Za-z](?:\.[A-Za-z])+"
SGML = (
    r"<(?:[!?][A-Za-z-][^>\r\n]*"
    r"|/?[A-Za-z][A-Za-z0-9_:.-]*"
    r"(?:[ ]+[A-Za-z][A-Za-z0-9_:.-]*"
    r"(?:[ ]*=[ ]*(?:'[^'\n]*'|\"[^\"\n]*\"|[A-Za-z0-9_:.-]+))?)*[ ]*/?)[ ]*>"
)
# The words after which a period ends a sentence (rule 27): first letter exactly upper case.
# Measured on the jar: the spec's list also has Did, During, How, Who, Why, which 3.4.1 lacks.
_SENT_STARTERS = (
    "About", "According", "Additionally", "After", "An", "A", "As", "At", "But", "Earlier", "He",
    "Her", "Here", "However", "If", "In", "It", "Last", "Many", "More", "Mr.", "Ms.", "Now",
    "Once", "One", "Other", "Our", "She", "Since", "So", "Some", "Such", "That", "The", "Their",
    "Then", "There", "These", "They", "This", "We", "When", "While", "What", "Yet", "You",
)  # fmt: skip
SENT_START = (
    "(?:"
    + "|".join(w[0] + _ci(re.escape(w[1:])) for w in sorted(_SENT_STARTERS, key=len, reverse=True))
    + ")"
)
SENTEND = f"{SPACENL}(?:{SPACENL}|[{_UPPER}]|{SGML})"

_ABBREV1_WORDS = (
    # months, days
    "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
    "Mon", "Tue", "Tues", "Wed", "Thu", "Thurs", "Fri",
    # states (a bracketed first letter must be upper case)
    "Ala", "Ariz", "[A]z", "[A]rk", "Calif", "Colo", "Conn", "Ct", "Dak", "[D]el", "Fla", "Ga",
    "[I]ll", "Ind", "Kan", "Kans", "Ky", "[L]a", "[M]ass", "Md", "Mich", "Minn", "[M]iss", "Mo",
    "Mont", "Neb", "Nev", "Okla", "[O]re", "[P]a", "Penn", "Tenn", "[T]ex", "Va", "Vt", "[W]ash",
    "Wis", "Wisc", "Wyo",
    # companies (Pty, Pte, Ptys, Ppty, ...: the y/e is a case-sensitive class)
    "Inc", "Co", "Cos", "Corp", "Pt[y]", "Pt[e]", "Pt[y]s", "Pt[e]s", "Ppt[y]", "Ppt[e]",
    "Ppt[y]s", "Ppt[e]s", "Ltd", "Plc", "Rt", "Bancorp", "Bhd", "Assn", "Univ", "Intl", "Sys",
    # numbers, titles after names, misc
    "tel", "est", "ext", "sq", "Jr", "Sr", "Bros", r"Ed\.D", r"Ph\.D", "Blvd", "Rd", "Esq",
    "etc", "al", "seq", "Bldg",
)  # fmt: skip
_ABBREV3_WORDS = ("ca", "fig", "figs", "prop", "no", "nos", "art", "bldg", "pp", "op")
_ABBREV4_WORDS = (
    "Mr", "Mrs", "Ms", "[M]iss", "Dr", "Drs", "Prof", "Profs", "Sen", "Sens", "Rep", "Reps",
    "Atty", "Attys", "Lt", "Col", "Gen", "Messrs", "Gov", "Govs", "Adm", "Rev", "Maj", "Sgt", "Cpl",
    "Pvt", "Capt", "St", "Ste", "Ave", "Pres", "Lieut", "Hon", "Brig", "Cmdr", "Comdr", "Pfc",
    "Spc", "Supt", "Supts", "Det", "Mt", "Ft", "Mfg", "Mtg",
    "vs", "Alex", "Ph", "Wm", "Jos", "cf", "Cie", r"a\.k\.a", "TREAS",
    "Invt", "Elec", "Natl", "Dept", "Blvd", "Rd",
)  # fmt: skip
ABBREV1 = _words(*_ABBREV1_WORDS) + r"\."
ABBREV3 = _words(*_ABBREV3_WORDS) + r"\."
ABBREV4 = f"(?:{_words(*_ABBREV4_WORDS)}|{ACRO})"
HTHING = rf"[A-Za-z0-9][A-Za-z0-9.,\u00ad]*(?:-(?:{ACRO2}\.|[A-Za-z0-9\u00ad]+))+"
_HYPHEN = "-_\u058a\u2010\u2011"
_THING_PART = f"(?:[dDoOlL]{APOSETC}{LD})?{LD}+"
THING = f"{_THING_PART}(?:[{_HYPHEN}]{_THING_PART})*"
THINGA = r"[A-Z]+(?:(?:\+|(?i:&amp;)|&)[A-Z]+)+"  # &amp; in any case, as the jar's %caseless
INSENTP = "[,;:\u3001]"
_URL_END = '[^ \\t\\n\\f\\r"<>|.!?(){},-]'
# QUOTES (rules 58-59): "'", "''", or one or two of these characters in any combination.
_QUOTE_CHARS = "`\u2018\u2019\u201a-\u201f\u0091\u0092\u0093\u0094\u2039\u203a\u00ab\u00bb"
_OPEN_QUOTE_CHARS = _QUOTE_CHARS.replace("\u2019", "").replace("\u0092", "")
# Single-character tokens the jar keeps as they are (rule 63 plus the one-character cases of
# rules 25-26, 45-51); measured on the jar.
_MISC_RANGES = """
    0024-0027 002A-002C 003A-003E 005C 005E 0060 007C 007E 00A1 00A5-00A9 00AC 00AE-00B4
    00B6-00B9 00BF 00D7 00F7 037E 0387 0589 05BE 05C0 05C3 05C6 05F3-05F4 0600-0603 0606-060C
    0614 061B 061E-061F 066A 066D 06D4 0700-070D 07F6-07F8 0964-0965 0E3F 0E4F 1FBD 2016-2017
    201A 201E-2023 2030-2038 203B 203E-2042 2044 2070 2074-207E 2080-208E 20A4 2100-2101
    2103-2106 2108-2109 2114 2116-2118 211E-2123 2125 2127 2129 212E 213A-213B 2140-2144
    214A-214D 214F 2155-215E 2190-2BFF 3001-3002 3012 30FB FF01-FF0F FF1A-FF20 FF3B-FF40
    FF5B-FF65 FFE0-FFE1 FFE5-FFE6
"""
_MISC = _class_body(_MISC_RANGES)

# ---------------------------------------------------------------------------------------------
# Token rewriting used by the rule actions.
# ---------------------------------------------------------------------------------------------

_UNICODE_QUOTES = {
    "\u0091": "`", "\u2018": "`", "\u201b": "`", "\u2039": "`",
    "\u0092": "'", "\u2019": "'", "\u203a": "'",
    "\u0093": "``", "\u201c": "``", "\u00ab": "``",
    "\u0094": "''", "\u201d": "''", "\u00bb": "''",
}  # fmt: skip
_UNICODE_QUOTES_TABLE = str.maketrans(_UNICODE_QUOTES)
_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}
_PARENS = str.maketrans({"(": "-LRB-", ")": "-RRB-"})
_FRAC2 = {"\u00bc": "1/4", "\u00bd": "1/2", "\u00be": "3/4", "\u2153": "1/3", "\u2154": "2/3"}
_CURRENCY = {"\u0080": "$", "\u00a4": "$", "\u20a0": "$", "\u20ac": "$", "\u00a2": "cents",
             "\u00a3": "#"}  # fmt: skip


def _remove_soft_hyphens(token: str) -> str:
    # Words, numbers and hyphenated things lose their soft hyphens (other tokens keep them); a
    # token made only of soft hyphens becomes "-".
    if "\u00ad" not in token:
        return token
    return token.replace("\u00ad", "") or "-"


def _right_quotes(text: str) -> str:
    # Curly and CP1252 quotes become ASCII by their direction; straight ones stay.
    return text.replace("&apos;", "'").translate(_UNICODE_QUOTES_TABLE)


def _left_quotes(text: str) -> str:
    # Only a lone straight apostrophe turns into an opening "`" ("''" stays "''").
    return "`" if text == "'" else _right_quotes(text)


def _normalize_amp(text: str) -> str:
    """The entity ``&amp;`` in any case as ``&`` (the jar's normalizeAmp)."""
    return _AMP.sub("&", text)


_AMP = re.compile("(?i)&amp;")


def _nbsp(text: str) -> str:
    return text.replace(" ", "\u00a0")


# ---------------------------------------------------------------------------------------------
# Rules. A rule is a main pattern, an optional trailing context (matched but not consumed) and
# an action. `first` is the set of characters a match can start with: the scanner only tries
# the rules whose `first` contains the current character.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rule:
    number: int  # rule number in metric-spec §1.3
    name: str
    patterns: tuple[re.Pattern[str], ...]  # each: group 1 = main part, rest = trailing context
    first: re.Pattern[str]
    action: Callable[[str], str]
    pushback: int = 0
    # One regex for all alternatives, tried first: most positions match none of them.
    guard: re.Pattern[str] | None = None


def _keep(text: str) -> str:
    return text


def _const(value: str) -> Callable[[str], str]:
    return lambda _text: value


_END = r"\Z"
_RULES: list[_Rule] = []


def _rule(
    number: int,
    name: str,
    first: str,
    mains: str | Sequence[str],
    context: str = "",
    action: Callable[[str], str] = _keep,
    pushback: int = 0,
) -> None:
    """Register a rule.

    Each alternative in `mains` becomes its own pattern and the longest one wins, because
    Python's `|` takes the first alternative that matches where JFlex takes the longest.
    """
    if isinstance(mains, str):
        mains = [mains]
    suffix = f"(?:{context})" if context else ""
    patterns = tuple(re.compile(f"({main}){suffix}") for main in mains)
    guard = (
        re.compile("|".join(f"(?:{main}){suffix}" for main in mains)) if len(mains) > 1 else None
    )
    _RULES.append(_Rule(number, name, patterns, re.compile(f"[{first}]"), action, pushback, guard))


_LOWER_UPPER = "A-Za-z"
_rule(1, "PROG", "cCfF", [r"[cC]\+\+", "[cCfF]#"])
# ASSIM rules shorten the match and rescan the rest: "cannot" -> "can", then "not".
_rule(2, "ASSIM3", "cC'", [_ci("cannot"), _ci("'twas")], action=lambda text: text[:-3], pushback=3)
_rule(3, "ASSIM2", "'gGlLwW", _words("'tis", "gonna", "gotta", "lemme", "gimme", "wanna"),
      action=lambda text: text[:-2], pushback=2)  # fmt: skip
_rule(4, "SGML", "<", SGML, action=_nbsp)
_rule(5, "MDASH", "&\u0096\u0097\u2013\u2014\u2015",
      _words("&MD;", "&mdash;", "&ndash;") + "|[\u0096\u0097\u2013\u2014\u2015]",
      action=_const("--"))  # fmt: skip
_rule(6, "AMP", "&", _ci("&amp;"), action=_const("&"))
_rule(7, "SPPUNC", "&", _words("&HT;", "&TL;", "&UR;", "&LR;", "&QC;", "&QL;", "&QR;", "&odq;",
                               "&cdq;") + "|&#[0-9]+;")  # fmt: skip
_rule(8, "WORD+REDAUX", _WORD_LETTER + "&", WORD, context=REDAUX, action=_remove_soft_hyphens)
_rule(9, "SWORD+SREDAUX", _LOWER_UPPER + "\u00ad", "[A-Za-z\u00ad]*[A-MO-Za-mo-z]\u00ad*",
      context=SREDAUX, action=_remove_soft_hyphens)  # fmt: skip
_rule(10, "WORD", _WORD_LETTER + "&", WORD, action=_remove_soft_hyphens)
_rule(11, "APOWORD", _LETTER + _APOSETC_CHARS + "&", [
    f"{APOS}[nN]{APOS}?",
    f"[lLdDjJ]{APOS}",
    _ci("dunkin") + APOS, _ci("somethin") + APOS, _ci("ol") + APOS, APOS + _ci("em"),
    f"[A-HJ-XZn]{APOSETC}{L}{{2,}}",
    f"{APOS}[2-9]0[sS]",
    APOS + _ci("till?"),
    f"{L}+[aeiouyAEIOUY]{APOSETC}[aeiouA-Z]{L}*",
    APOS + _ci("cause"),
    _ci(r"cont'd\.?"), _ci("nor'easter"), _ci("c'mon"), _ci("e'er"), _ci("s'mores"),
    _ci("ev'ry"), _ci("li'l"), _ci("nat'l"),
    f"[oO]{APOSETC}[oO]",
])  # fmt: skip
_rule(12, "APOWORD2", "yY", f"[yY]{APOS}", context=L)
_rule(13, "FULLURL", "fFsShHmM",
      _words("ftp", "svn", r"svn\+ssh", "http", "https", "mailto")
      + f"://[^ \\t\\n\\f\\r\"<>|(){{}}]+{_URL_END}")  # fmt: skip
_URL_TAIL = f'(?:/[^ \\t\\n\\f\\r"<>|()]+{_URL_END})?'
_rule(14, "LIKELYURL", "wW", _ci("www") + r'\.(?:[^ \t\n\f\r"<>|.!?(){},]+\.)+'
      + "[a-zA-Z]{2,4}" + _URL_TAIL)  # fmt: skip
# Host labels exclude "," to "_" (U+002C-U+005F: digits, upper case, ...), a range in the jar's
# class; other spaces than " " and tab are allowed (see _skip).
_URL_LABEL = "[^ \\t\\n\\f\\r\"`'<>|.!?(){}$,-_]"
_rule(
    14,
    "LIKELYURL2",
    "^" + _URL_LABEL[2:-1],
    f"(?:{_URL_LABEL}+\\.)+" + _words("com", "net", "org", "edu") + _URL_TAIL,
)
_EMAIL_CHAR = '[^ \\t\\n\\f\\r"<>|(){}\u00a0]'
_HOST_CHAR = '[^ \\t\\n\\f\\r"<>|(){}.\u00a0]'
_rule(15, "EMAIL", "A-Za-z0-9<&", _ci("(?:<|&lt;)?") + f"[A-Za-z0-9]{_EMAIL_CHAR}*@"
      f"(?:{_HOST_CHAR}+\\.)*{_HOST_CHAR}+" + _ci("(?:>|&gt;)?"))  # fmt: skip
_rule(16, "TWITTER", "@#", [r"@[A-Za-z_][A-Za-z0-9_]*", f"#{WL}+"])
_rule(17, "REDAUX", _APOS_CHARS + "&", REDAUX, context=f"[^A-Za-z]|{_END}", action=_right_quotes)
_rule(18, "SREDAUX", "nN", SREDAUX, context=f"[^A-Za-z]|{_END}", action=_right_quotes)
_rule(19, "DATE", _DIGIT, f"{D}{{1,2}}[-/]{D}{{1,2}}[-/]{D}{{2,4}}")
_rule(20, "NUMBER", "-+.:,\u00ad\u066b\u066c" + _DIGIT,
      f"[-+]?(?:{D}*(?:[.:,\u00ad\u066b\u066c]{D}+)+|{D}+)",
      action=_remove_soft_hyphens)  # fmt: skip
_rule(
    20,
    "SUBSUPNUM",
    "\u207a\u207b\u208a\u208b\u2070\u00b9\u00b2\u00b3\u2074-\u2079\u2080-\u2089",
    "[\u207a\u207b\u208a\u208b]?(?:[\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+|[\u2080-\u2089]+)",
)
_rule(21, "FRAC", _DIGIT, f"(?:{D}{{1,4}}[- \u00a0])?{D}{{1,4}}(?:\\\\?/|\u2044){D}{{1,4}}",
      action=_nbsp)  # fmt: skip
_rule(22, "FRAC2", "\u00bc\u00bd\u00be\u2153-\u215e", "[\u00bc\u00bd\u00be\u2153-\u215e]",
      action=lambda text: _FRAC2.get(text, text))  # fmt: skip
_rule(23, "TBSPEC", "-cCpPaAsS'", [
    "-" + _words("RRB", "LRB", "RCB", "LCB", "RSB", "LSB") + "-",
    _ci(r"C\.D\.s"), _ci("pro-"), _ci("anti-"), _ci("S(?:&|&amp;)P-500"), _ci("S(?:&|&amp;)Ls"),
    _ci("Cap") + APOS + "[nN]", "[cC]" + APOS + _ci("est"),
], action=_normalize_amp)  # fmt: skip
_THING3_PART = r"[A-Za-z0-9]+(?:-[A-Za-z]+){0,2}"
_rule(24, "THING3", "A-Za-z0-9", rf"{_THING3_PART}(?:\\?/{_THING3_PART}){{1,2}}")
_rule(25, "DOLSIGN", "A-Z$#", [r"[A-Z]*\$", "#"])
_rule(26, "DOLSIGN2", "".join(_CURRENCY), "[" + "".join(_CURRENCY) + "]",
      action=lambda text: _CURRENCY[text])  # fmt: skip
_rule(27, "ACRONYM.", _LOWER_UPPER, ACRO + r"\.",
      context=f"{SPACENL}+(?:{SENT_START}|{SGML}){SPACENL}",
      action=lambda text: text[0] if len(text) == 2 else text, pushback=1)  # fmt: skip
_rule(28, "ABBREV3", "cCfFpPnNaAbBoO", ABBREV3, context=f"{SPACENL}?{D}")
_rule(29, "ABBREV1.", _LOWER_UPPER, ABBREV1, context=SENTEND, pushback=1)
_rule(30, "ABBREV1", _LOWER_UPPER, ABBREV1, context=r"[\s\S]{2}")
_rule(31, "ABBREV1$", _LOWER_UPPER, ABBREV1, pushback=1)
_rule(32, "ABBREV2", _LOWER_UPPER, ABBREV4 + r"\.")
_rule(33, "ABBREV4", _LOWER_UPPER, ABBREV4, context=SPACE)
_rule(34, "ACRO", _LOWER_UPPER, ACRO, context=SPACENL)
_rule(35, "TBSPEC2", _APOS_CHARS + "&", f"{APOS}[0-9][0-9]", context=SPACENL)
_rule(36, "WORD.", _WORD_LETTER + "&", WORD + r"\.", context=INSENTP, action=_remove_soft_hyphens)
_PHONE_SEP = "[- \u00a0]"
# FILENAME: name.ext for a fixed list of extensions, before a space or [.?!,].
_FILE_EXTENSIONS = (
    "bat", "bmp", "c", "class", "cpp", "doc", "docx", "exe", "gif", "gz", "h", "htm", "html",
    "jar", "java", "jpeg", "jpg", "mov", "mp3", "pdf", "php", "pl", "png", "ppt", "ps", "py",
    "sql", "tar", "txt", "wav", "x", "xml", "zip",
)  # fmt: skip
_rule(36, "FILENAME", _WORD_LETTER + _DIGIT + "&",
      f"{WLD}+(?:\\.{WLD}+)*\\." + _words(*_FILE_EXTENSIONS),
      context=f"{SPACENL}|[.?!,]")  # fmt: skip
_rule(37, "PHONE", "(+0-9", [
    rf"\([0-9]{{2,3}}\)[ \u00a0]?[0-9]{{3,4}}{_PHONE_SEP}?[0-9]{{3,5}}",
    rf"(?:\+\+?)?(?:[0-9]{{2,4}}{_PHONE_SEP})?[0-9]{{2,4}}{_PHONE_SEP}[0-9]{{3,4}}{_PHONE_SEP}?"
    "[0-9]{3,5}",
    r"(?:(?:\+\+?)?[0-9]{2,4}\.)?[0-9]{2,4}\.[0-9]{3,4}\.[0-9]{3,5}",
], action=lambda text: _nbsp(text).translate(_PARENS))  # fmt: skip
_rule(38, "DBLQUOT(", '"&', _ci('"|&quot;'), context="[A-Za-z0-9$]", action=_const("``"))
_rule(39, "DBLQUOT)", '"&', _ci('"|&quot;'), action=_const("''"))
_rule(40, "LT", "<&", _ci("<|&lt;"), action=_const("<"))
_rule(40, "GT", ">&", _ci(">|&gt;"), action=_const(">"))
_rule(41, "SMILEY", "<>:;=", r"[<>]?[:;=][-o*']?[()DPdpO\\{@|\[\]]",
      context=f"[^A-Za-z0-9]|{_END}", action=lambda text: text.translate(_PARENS))  # fmt: skip
_ASIAN_EYE = "[-^x=~<>']"
_rule(41, "ASIANSMILEY", "-^x=~<>'(", [
    f"{_ASIAN_EYE}_{_ASIAN_EYE}",
    rf"\({_ASIAN_EYE}[_.]?{_ASIAN_EYE}\)",
    r"\([\^x=~<>']-[\^x=~<>']\)",
], action=lambda text: text.translate(_PARENS))  # fmt: skip
_rule(42, "BRACKET", r"()\[\]{}", r"[()\[\]{}]", action=lambda text: _BRACKETS[text])
_rule(43, "HYPHENS", "-", "-+", action=lambda text: "--" if len(text) in (3, 4) else text)
_rule(44, "LDOTS", ".\u2026\u0085", [r"\.{3,5}", "[\u2026\u0085]", r"\.(?:[ \u00a0]\.){2,4}"],
      action=_const("..."))  # fmt: skip
_rule(45, "ATS", "@#_", ["@+", "#+", "_+"])
_rule(46, "STARS", "*\\\\", [r"\*+", r"(?:\\\*){1,3}"])
_rule(47, "INSENTP", ",;:\u3001", INSENTP)
_rule(48, "QMARKS", "?!", "[?!]+")
_rule(49, "PERIOD", ".", r"\.")
_rule(50, "EQUALS", "=", "=")
_rule(51, "SLASH", "/", "/")
_rule(52, "HTHING", "A-Za-z0-9", HTHING, action=_remove_soft_hyphens)
_rule(53, "HTHING.", "A-Za-z0-9", HTHING + r"\.", context=INSENTP, action=_remove_soft_hyphens)
_rule(54, "THING.", "dDoOlL" + _JAVA_LETTER + _DIGIT, THING + r"\.", context=INSENTP)
_rule(55, "THING", "dDoOlL" + _JAVA_LETTER + _DIGIT, THING)
_rule(56, "THINGA.", "A-Z", THINGA + r"\.", context=INSENTP,
      action=_normalize_amp)  # fmt: skip
_rule(57, "THINGA", "A-Z", THINGA, action=_normalize_amp)
# A quote before a letter and a non-space opens a quotation, except one starting with a right
# single quote.
_rule(58, "QUOTES(", "'" + _OPEN_QUOTE_CHARS,
      ["''", "'", f"[{_OPEN_QUOTE_CHARS}][{_QUOTE_CHARS}]?"],
      context="[A-Za-z][^ \t\n\r\u00a0]", action=_left_quotes)  # fmt: skip
_rule(59, "QUOTES)", "'&" + _QUOTE_CHARS, ["''", APOS, f"[{_QUOTE_CHARS}]{{1,2}}"],
      action=_right_quotes)  # fmt: skip
_rule(60, "REDAUX", _APOS_CHARS + "&", REDAUX, action=_right_quotes)
_rule(61, "SREDAUX", "nN", SREDAUX, action=_right_quotes)
_rule(62, "LTLT", "<>", "<<|>>")
_rule(63, "MISC", _MISC, f"[{_MISC}]")
_rule(64, "NBSP", "&", _ci("&nbsp;"), action=_const(""))  # a space: no token

# ---------------------------------------------------------------------------------------------
# The scanner.
# ---------------------------------------------------------------------------------------------

# Whitespace and the characters the jar ignores outright. A newline other than "\n" ("\r",
# U+2028, ...) ends an output line in the jar but not a caption here; see tokenize_lines.
_SKIP = re.compile(f"[{_SPACE}\r\u2028\u2029\u000b\u000c\u200b\u200e\u200f\ufeff\x00]*")
_SKIPPED = frozenset(
    " \t\u00a0\u3000\r\u2028\u2029\u000b\u000c\u200b\u200e\u200f\ufeff\x00"
    + "".join(map(chr, range(0x2000, 0x200B)))
)
_SPACES = re.compile(f"{SPACE}+")
_TLD = re.compile(r"\.(?:com|net|org|edu)", re.IGNORECASE)
_LIKELYURL2 = next(rule for rule in _RULES if rule.name == "LIKELYURL2")


def _skip_before_url(text: str, pos: int, end: int) -> int:
    """Skip whitespace like _SKIP, but stop where LIKELYURL (rule 14) starts and wins.

    Its host labels may contain spaces other than " " and tab, so it can start at one. The
    jar's whitespace rule takes a whole run of SPACE characters at once (one character for the
    others), and the URL wins only if it is longer than that.
    """
    (url,) = _LIKELYURL2.patterns
    while pos < end and text[pos] in _SKIPPED:
        spaces = _SPACES.match(text, pos)
        skip_to = spaces.end() if spaces else pos + 1
        match = url.match(text, pos)
        if match is not None and match.end() > skip_to:
            break
        pos = skip_to
    return pos


class _Dispatch:
    """For each character, the rules whose match can start with it (computed once per char)."""

    def __init__(self, rules: Sequence[_Rule]) -> None:
        self._rules = tuple(rules)
        self._table: dict[str, tuple[_Rule, ...]] = {}

    def __getitem__(self, char: str) -> tuple[_Rule, ...]:
        rules = self._table.get(char)
        if rules is None:
            rules = tuple(rule for rule in self._rules if rule.first.match(char))
            self._table[char] = rules
        return rules


_ALL_RULES = _Dispatch(_RULES)
# LIKELYURL's second form can start with almost any character, but it needs ".com" & co.
_NO_URL_RULES = _Dispatch([rule for rule in _RULES if rule is not _LIKELYURL2])


def _step(text: str, pos: int, dispatch: _Dispatch) -> tuple[str | None, int]:
    """Apply the rule with the longest match at `pos` (ties: earlier rule); return token, end."""
    best_rule = None
    best_match = None
    best_total = 0
    for rule in dispatch[text[pos]]:
        if rule.guard is not None and rule.guard.match(text, pos) is None:
            continue
        for pattern in rule.patterns:
            match = pattern.match(text, pos)
            if match is not None and match.end() - pos > best_total:
                best_total = match.end() - pos
                best_rule, best_match = rule, match
    if best_rule is None or best_match is None:
        return None, pos + 1  # no rule accepts this character: the jar deletes it
    main = best_match.group(1)
    return best_rule.action(main), pos + len(main) - best_rule.pushback


# Fast path for one token. A run of ASCII letters followed by a space, tab, "\n" or the end of
# the text is one WORD token (rule 10) unless it is an ASSIM word (rules 2-3): every other rule
# that could match longer needs an apostrophe, period, digit, hyphen, slash, "@", "&", "+" or
# "$" right after the run, and the two whose trailing context is that space (33, 34) emit the
# same run.
_FAST_WORD = re.compile(r"[A-Za-z]+(?=[ \t\n]|\Z)")
_ASSIM_WORDS = frozenset(["cannot", "gonna", "gotta", "lemme", "gimme", "wanna"])

# Fast path for whole captions: ASCII words separated by spaces, each optionally followed by
# "," or "." (then a space or the end of the caption). Splitting gives the jar's tokens,
# provided no word is an ASSIM word and no word before a period is a single letter or an
# abbreviation (rules 27-32 keep the period or look into the next caption there). A period is
# never followed by ". ." in such a caption, so LDOTS (rule 44) cannot apply either.
# _NOT_SIMPLE finds the characters that disqualify a caption: anything else, and "." or ","
# not preceded by a letter or not followed by a space or the end of the caption.
_NOT_SIMPLE = re.compile(r"[^A-Za-z ,.\n]|[.,](?:(?<![A-Za-z][.,])|(?![ \n]|\Z))")
_ABBREVIATIONS = frozenset(
    word.replace("[", "").replace("]", "").lower()
    for word in _ABBREV1_WORDS + _ABBREV3_WORDS + _ABBREV4_WORDS
    if "\\" not in word
)


def _plain_words(tokens: list[str]) -> bool:
    """Whether a simple caption's split `tokens` need none of the special rules."""
    if not _ASSIM_WORDS.isdisjoint(tokens):
        return False
    if "." in tokens:
        for i, token in enumerate(tokens):
            if token == "." and (len(tokens[i - 1]) == 1 or tokens[i - 1] in _ABBREVIATIONS):
                return False
    return True


def _scan(text: str, pos: int, end: int) -> list[str]:
    """Tokens of the caption at text[pos:end]; trailing contexts may look past `end`.

    The wrapper's captions are separated by "\\n" and no token contains one, so each caption
    starts a fresh token and can be scanned on its own, as long as the lookahead sees the
    following captions (metric-spec §1.3, cross-line context).
    """
    url = _TLD.search(text, pos, end) is not None
    dispatch = _ALL_RULES if url else _NO_URL_RULES
    tokens = []
    while True:
        pos = _skip_before_url(text, pos, end) if url else _SKIP.match(text, pos, end).end()
        if pos >= end:
            return tokens
        fast = _FAST_WORD.match(text, pos)
        if fast is not None and fast.group().lower() not in _ASSIM_WORDS:
            tokens.append(fast.group())
            pos = fast.end()
            continue
        token, pos = _step(text, pos, dispatch)
        if token:
            tokens.append(token)


def raw_tokens(texts: Sequence[str]) -> list[tuple[str, ...]]:
    """Lower-cased tokens of each caption, before the wrapper's punctuation removal.

    The captions are tokenized as one batch, like one call of the wrapper (metric-spec §1.1).
    Newlines the jar knows besides "\\n" ("\\r", U+2028, U+2029, U+000B, U+000C) make it print
    extra lines, which pycocoevalcap then pairs with the wrong captions (and drops the last
    ones); here they separate tokens and every caption keeps its own tokens. U+0085 is "..."
    for the jar, as here.
    """
    captions = [text.replace("\n", " ") for text in texts]
    if not captions:
        return []
    joined = "\n".join(captions)
    starts = [0, *itertools.accumulate(len(caption) + 1 for caption in captions)]
    not_simple = {bisect.bisect_right(starts, m.start()) - 1 for m in _NOT_SIMPLE.finditer(joined)}
    # Lower-casing keeps the lines apart; it is exact for the simple (ASCII) captions.
    lines = joined.lower().replace(",", " , ").replace(".", " . ").split("\n")
    result = []
    for index, line in enumerate(lines):
        tokens = line.split()
        if index in not_simple or not _plain_words(tokens):
            start = starts[index]
            scanned = _scan(joined, start, start + len(captions[index]))
            tokens = [java_lower(token) for token in scanned]  # the jar lower-cases each
        result.append(tuple(tokens))
    return result


def scan_tokens(text: str) -> list[str]:
    """The lexer's tokens of one text, case kept (the text is one document: its end is the
    end of the input)."""
    return _scan(text, 0, len(text))


def tokenize_lines(texts: Sequence[str]) -> list[tuple[str, ...]]:
    """What one call of pycocoevalcap's PTBTokenizer makes of `texts`, one tuple per caption.

    The wrapper right-strips each output line with Python's ``str.rstrip``, splits it on " " and
    drops the PUNCTUATION tokens (metric-spec §1.1); a token ending in a character Python calls
    whitespace (possible inside e-mail addresses and URLs) is therefore cut there if it is last.
    """
    result = []
    for tokens in raw_tokens(texts):
        if tokens and tokens[-1] != tokens[-1].rstrip():
            tokens = tuple(" ".join(tokens).rstrip().split(" "))
        result.append(tuple(token for token in tokens if token and token not in PUNCTUATION))
    return result
