"""Java's String.toLowerCase, whose final sigma the reference tokenizer's tokens carry."""

from __future__ import annotations

import subprocess

import pytest

from capeval_core.java_lower import java_lower
from tests.conftest import requires_java

#: (text, text.toLowerCase(Locale.ENGLISH)) as OpenJDK 17.0.15 computes it, the Java that runs
#: pycocoevalcap 1.2's tokenizer jar (Stanford CoreNLP 3.4.1) here.
JAVA_17: list[tuple[str, str]] = [
    ("ΟΔΟΣ3-WAY", "οδος3-way"),  # the word ends at the digit: no cased letter after Σ
    ("aΣ-3b", "aς-3b"),
    ("ႠꙀ1e10-Σ", "ⴀꙁ1e10-σ"),  # Σ a word of its own after the hyphen
    ("WAYΣ@D", "wayς@d"),
    ("ΑΣ-Β", "ασ-β"),  # a hyphen between letters keeps one word
    ("1e10Σ", "1e10ς"),
    ("ΣΑΣ-ΣΑΣ", "σασ-σας"),
    ("ΑΣ1Β", "ασ1β"),  # letters and digits alternate within one word
    ("ΑΣ1-5Β", "ας1-5β"),
    ("ΑΣ1.5Β", "ασ1.5β"),
    ("ΑΣ..Β", "ας..β"),  # two marks in a row end the word
    ("ΑΣ_Β", "ασ_β"),
    ("ΑΣカ", "αςカ"),
    ("Α\u200dΣ", "α\u200dς"),  # a format character is invisible
    ("ΑΣ\u00ad\u2027Β", "ας\u00ad\u2027β"),  # but the soft hyphen is a mark inside words
    ("Ο\u2027Σ1\u00adͺ", "ο\u2027ς1\u00adͺ"),
    ("ªΣ", "ªσ"),  # ª is no cased letter for Java (Python's islower says it is)
    ("ʰΣ", "ʰς"),
    ("ⅠΣ", "ⅰς"),
    ("ⓐΣ", "ⓐσ"),  # cased, but a word of its own
    ("ΑΣ\u0301", "ας\u0301"),
    ("ΑΣ%", "ας%"),
    ("ΑΣ 1", "ας 1"),
    ("A\U0001d400Σ", "a\U0001d400σ"),  # after a character of two UTF-16 units Java breaks
    ("\U0001d400Σ", "\U0001d400ς"),  # unless it starts the text
    ("ΓΣ\U0001d7cfΓ", "γς\U0001d7cfγ"),
]


@pytest.mark.parametrize(("text", "lower"), JAVA_17)
def test_final_sigma_as_java(text: str, lower: str) -> None:
    assert java_lower(text) == lower


def test_text_without_capital_sigma_is_pythons_lower() -> None:
    assert java_lower("A Dog ÜBER İ σς") == "A Dog ÜBER İ σς".lower()


#: every character Java lowers, one line each: its code point and its lower case's (hex)
_LOWER_JAVA = """
import java.util.Locale;
public class Lower {
  public static void main(String[] args) {
    StringBuilder out = new StringBuilder();
    for (int cp = 0; cp <= 0x10FFFF; cp++) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      String s = new String(Character.toChars(cp));
      String low = s.toLowerCase(Locale.ENGLISH);
      if (low.equals(s)) continue;
      out.append(Integer.toHexString(cp));
      low.codePoints().forEach(c -> out.append(' ').append(Integer.toHexString(c)));
      out.append('\\n');
    }
    System.out.print(out);
  }
}
"""


def test_unicode14_capitals_stay_as_java_17_leaves_them() -> None:
    """Java 17 lowers by Unicode 13.0: 'Ⱟ' stays 'Ⱟ' (Python 3.11: 'ⱟ'), so METEOR matched
    'Ⱟ' with 'ⱟ' where meteor-1.5.jar does not."""
    from capeval_core.java_lower import unicode13_lower

    assert unicode13_lower("A \u2c2f \ua7c0 \U00010570 \ua7d0 ẞ Dog") == (
        "a \u2c2f \ua7c0 \U00010570 \ua7d0 ß dog"
    )
    assert java_lower("ΑΣ \u2c2f") == "ας \u2c2f"


@pytest.mark.slow
@requires_java
def test_every_character_is_lowered_as_java_17_lowers_it(tmp_path) -> None:
    """Each code point alone, against the running Java's toLowerCase(Locale.ENGLISH)."""
    from capeval_core.java_lower import unicode13_lower

    source = tmp_path / "Lower.java"
    source.write_text(_LOWER_JAVA, encoding="utf-8")
    out = subprocess.run(["java", str(source)], capture_output=True, text=True, check=True)
    java = {}
    for line in out.stdout.splitlines():
        code, *lower = line.split()
        java[int(code, 16)] = "".join(chr(int(c, 16)) for c in lower)
    assert len(java) > 1_300  # the run listed Java's lower cases
    differ = [
        hex(cp)
        for cp in range(0x110000)
        if not 0xD800 <= cp <= 0xDFFF and unicode13_lower(chr(cp)) != java.get(cp, chr(cp))
    ]
    assert differ == []
