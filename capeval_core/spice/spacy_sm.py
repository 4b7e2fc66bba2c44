"""The ``spacy-sm`` parser: spaCy's English small model, its ClearNLP labels converted to the
collapsed, CC-processed UD graph SPICE reads (metric-spec §6.3), lemmas from spaCy's tables.

An approximation of SPICE 1.0's CoreNLP pipeline (selectable as ``parser="spacy-sm"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from capeval_core.errors import MissingResourceError
from capeval_core.spice.depgraph import DepGraph, Token, is_noun, word_set
from capeval_core.spice.enhancement import enhance
from capeval_core.spice.rules import RULES_VERSION, Tuple, extract_tuples
from capeval_core.spice.spacy_runtime import MATMUL, import_spacy, use_numpy_blas
from capeval_core.spice.spacy_runtime import model_package as _model_package

# §6.3: multiword prepositions CoreNLP joins into one ``nmod:a_b(_c)`` relation.
TWO_WORD_PREPS = frozenset(
    tuple(p.split("_"))
    for p in word_set(
        "across_from along_with alongside_of apart_from as_for as_from as_of as_per as_to "
        "aside_from based_on close_by close_to contrary_to compared_to compared_with "
        "depending_on except_for exclusive_of far_from followed_by inside_of irrespective_of "
        "next_to near_to off_of out_of outside_of owing_to preliminary_to preparatory_to "
        "previous_to prior_to pursuant_to regardless_of subsequent_to thanks_to together_with"
    )
)
THREE_WORD_PREPS = frozenset(
    tuple(p.split("_"))
    for p in word_set(
        "by_means_of in_accordance_with in_addition_to in_case_of in_front_of in_lieu_of "
        "in_place_of in_spite_of on_account_of on_behalf_of on_top_of with_regard_to "
        "with_respect_to"
    )
)


_BE_FORMS = word_set("be is are was were been being am 's 're 'm")


# -- lemmas ------------------------------------------------------------------------------------

_VOWELS = frozenset("aeiou")


class Lemmatizer:
    """Lemmas from the spaCy model's own lookup tables, closer to CoreNLP's Morphology.

    spaCy's rule lemmatiser keeps the first form that its index knows, which turns
    "riding" into "rid". English spelling decides instead: a stem ending in one vowel and
    one consonant doubles that consonant before -ing/-ed ("rid" → "ridding"), so "riding"
    comes from "ride". Irregular forms come from the model's exception tables first.
    """

    def __init__(self, tables: dict[str, dict[str, Any]]) -> None:
        self.exc: dict[str, dict[str, list[str]]] = tables["exc"]
        self.index: dict[str, frozenset[str]] = tables["index"]
        self.rules: dict[str, list[list[str]]] = tables["rules"]

    def __call__(self, word: str, tag: str) -> str:
        """Lemma of ``word`` with PTB tag ``tag`` (lower-cased, as SPICE compares lemmas)."""
        w = word.lower()
        pos = _POS_OF_TAG.get(tag)
        if pos is None or tag in ("NN", "VB", "JJ", "RB"):
            return w  # base forms and closed classes stay as they are
        exc = self.exc.get(pos, {}).get(w)
        if exc:
            return exc[0]
        index = self.index.get(pos, frozenset())
        if pos == "verb" and tag in ("VBG", "VBD", "VBN"):
            lemma = self._verb(w, index)
            if lemma:
                return lemma
        oov = []
        for old, new in self.rules.get(pos, []):
            if w.endswith(old):
                form = w[: len(w) - len(old)] + new
                if form in index or (form and not form.isalpha()):
                    return form
                if form:
                    oov.append(form)
        return oov[0] if oov else w

    @staticmethod
    def _verb(w: str, index: frozenset[str]) -> str:
        if w.endswith("ing"):
            stem = w[:-3]
        elif w.endswith("ied"):
            return w[:-3] + "y" if w[:-3] + "y" in index else ""
        elif w.endswith("ed"):
            stem = w[:-2]
        else:
            return ""
        if len(stem) < 2:
            return ""
        # doubled final consonant: "sitting" → "sit", "hopped" → "hop"
        if stem[-1] == stem[-2] and stem[-1] not in _VOWELS and stem[:-1] in index:
            return stem[:-1]
        with_e = stem + "e"
        cvc = (
            len(stem) >= 2
            and stem[-1] not in _VOWELS
            and stem[-1] not in "wxy"
            and stem[-2] in _VOWELS
            and (len(stem) < 3 or stem[-3] not in _VOWELS)
        )
        if with_e in index and (cvc or stem not in index):
            return with_e
        if stem in index:
            return stem
        return ""


_POS_OF_TAG = {
    "NN": "noun",
    "NNS": "noun",
    "VB": "verb",
    "VBD": "verb",
    "VBG": "verb",
    "VBN": "verb",
    "VBP": "verb",
    "VBZ": "verb",
    "JJ": "adj",
    "JJR": "adj",
    "JJS": "adj",
    "RB": "adv",
    "RBR": "adv",
    "RBS": "adv",
}


# -- §6.3: spaCy's basic dependencies → collapsed, CC-processed UD ------------------------------

#: spaCy (ClearNLP) labels renamed to their UD v1 names; others keep their name.
_RELABEL = {
    "dative": "iobj",
    "poss": "nmod:poss",
    "prt": "compound:prt",
    "relcl": "acl:relcl",
    "npadvmod": "nmod:npmod",
    "predet": "det:predet",
    "preconj": "cc:preconj",
    "oprd": "xcomp",
    "quantmod": "advmod",
}


def to_ud_graph(
    words: Sequence[str],
    lemmas: Sequence[str],
    tags: Sequence[str],
    deps: Sequence[str],
    heads: Sequence[int],
) -> DepGraph:
    """Turn one parsed sentence (spaCy labels, ``heads[i] == i`` at the root) into the UD graph.

    >>> g = to_ud_graph(["a", "cat", "is", "on", "a", "table"],
    ...                 ["a", "cat", "be", "on", "a", "table"],
    ...                 ["DT", "NN", "VBZ", "IN", "DT", "NN"],
    ...                 ["det", "nsubj", "ROOT", "prep", "det", "pobj"], [1, 2, 2, 2, 5, 3])
    >>> [e for e in g.as_triples() if e[1] in ("nsubj", "cop", "case")]
    [('table', 'nsubj', 'cat'), ('table', 'cop', 'is'), ('table', 'case', 'on')]
    """
    n = len(words)
    lower = [w.lower() for w in words]
    g = DepGraph([Token(words[i], lemmas[i], tags[i]) for i in range(n)])
    kids: list[list[int]] = [[] for _ in range(n)]
    for i, h in enumerate(heads):
        if h != i:
            kids[h].append(i)
    handled = [False] * n  # the token's incoming edge was already rebuilt

    def pobj_of(p: int) -> int | None:
        return next((c for c in kids[p] if deps[c] == "pobj"), None)

    # Multiword prepositions (§6.3): "dog next to car" → nmod:next_to(dog, car), case(car,
    # next), mwe(next, to). Three-word ones first, as CoreNLP collapses them first.
    i = 0
    while i < n:
        for length, table in ((3, THREE_WORD_PREPS), (2, TWO_WORD_PREPS)):
            span = list(range(i, i + length))
            if i + length > n or tuple(lower[i : i + length]) not in table:
                continue
            obj = pobj_of(span[-1])
            if obj is None or any(heads[k] not in span for k in span[1:]):
                continue
            gov = heads[i]
            while gov in span and heads[gov] != gov:
                gov = heads[gov]
            if gov in span:  # the phrase heads the sentence: its object becomes the root
                g.roots.append(obj)
            else:
                g.add(gov, "nmod:" + "_".join(lower[i : i + length]), obj)
            g.add(obj, "case", i)
            for k in span[1:]:
                g.add(i, "mwe", k)
            for k in (*span, obj):
                handled[k] = True
            i += length - 1
            break
        i += 1

    # Single prepositions: head -prep-> P -pobj-> N ⇒ head -nmod:p-> N, N -case-> P.
    for j in range(n):
        if handled[j] or deps[j] not in ("prep", "agent"):
            continue
        obj = pobj_of(j)
        if obj is None or handled[obj]:
            continue
        rel = "nmod:agent" if deps[j] == "agent" else "nmod:" + lower[j]
        if heads[j] == j:
            g.roots.append(obj)
        else:
            g.add(heads[j], rel, obj)
        g.add(obj, "case", j)
        handled[j] = handled[obj] = True

    for j in range(n):
        h, dep = heads[j], deps[j]
        if h == j:
            if not handled[j]:
                g.roots.append(j)
            continue
        if handled[j]:
            continue
        if dep in ("prep", "agent"):
            rel = "advmod"  # a preposition without object is an adverbial particle in UD
        elif dep == "conj":
            rel = _conj_label(j, h, lower, deps, kids)
        elif dep == "nmod":
            rel = "compound" if is_noun(tags[j]) and is_noun(tags[h]) else "dep"
        else:
            rel = _RELABEL.get(dep, dep)
        g.add(h, rel, j)

    _reroot_copulas(g, lower, lemmas)
    _propagate_conjuncts(g)
    return g


def _conj_label(j: int, h: int, lower, deps, kids) -> str:
    """``conj:<cc>`` named after the coordinating word (CoreNLP's CC-processed labels)."""
    for node in (h, j):
        for c in kids[node]:
            if deps[c] == "cc" and lower[c].isalpha():
                return "conj:" + lower[c]
    return "conj"


def _reroot_copulas(g: DepGraph, lower: Sequence[str], lemmas: Sequence[str]) -> None:
    """UD makes the predicate the head of a copular clause, with ``cop(pred, be)`` (§6.3).

    spaCy makes "be" the head: its ``attr``/``acomp`` child becomes the predicate, or for
    "X is on Y" the object of the (already collapsed) ``nmod`` child, which has ``case(on)``.
    With ``expl`` ("there is a dog") "be" stays the head and ``attr`` is its subject.
    """
    for b in range(len(g.tokens)):
        if lemmas[b] != "be" and lower[b] not in _BE_FORMS:
            continue
        if any(r in ("aux", "auxpass") for _, r in g.incoming(b)):
            continue
        out = g.out(b)
        rels = [r for r, _ in out]
        if "expl" in rels:
            for e in g.edges:
                if e[0] == b and e[1] == "attr":
                    e[1] = "nsubj"
            continue
        pred = next((d for r, d in out if r in ("attr", "acomp")), None)
        has_subject = "nsubj" in rels or "nsubjpass" in rels
        if pred is None and has_subject and not {"dobj", "xcomp", "ccomp"} & set(rels):
            pred = next((d for r, d in out if r.startswith("nmod:") and r not in _NOT_PREP), None)
        if pred is None:
            continue
        for e in g.edges:
            if e[2] == b and e[0] != pred:  # pred takes over be's incoming edges
                e[2] = pred
            elif e[0] == b and e[2] != pred:  # and its other dependents
                e[0] = pred
        g.edges = [e for e in g.edges if not (e[0] == b and e[2] == pred)]
        if b in g.roots:
            g.roots[g.roots.index(b)] = pred
        g.add(pred, "cop", b)


_NOT_PREP = frozenset({"nmod:poss", "nmod:agent", "nmod:npmod", "nmod:tmod"})
_NO_PROPAGATE = ("conj", "cc", "punct", "mwe", "case")


def _propagate_conjuncts(g: DepGraph) -> None:
    """CC-processing (§6.3): conjuncts share their head's governor; verbs share the subject.

    "a man and a woman riding horses" gains ``nsubj(riding, woman)`` beside ``nsubj(riding,
    man)``.
    """
    k = 0
    while k < len(g.edges):
        x, rel, y = g.edges[k]
        k += 1
        if not rel.startswith("conj"):
            continue
        for gov, r in g.incoming(x):
            if not r.startswith(_NO_PROPAGATE) and gov != y:
                g.add(gov, r, y)
        tag = g.tokens[y].tag
        predicate_like = tag.startswith(("VB", "JJ")) or g.child(y, "cop") is not None
        if predicate_like and g.child(y, "nsubj") is None and g.child(y, "nsubjpass") is None:
            for r, s in g.out(x):
                if r in ("nsubj", "nsubjpass") and s != y:
                    g.add(y, r, s)


def sentence_tuples(
    words: Sequence[str],
    lemmas: Sequence[str],
    tags: Sequence[str],
    deps: Sequence[str],
    heads: Sequence[int],
) -> list[Tuple]:
    """The whole per-sentence pipeline (§6.3 conversion, §6.1 enhancements and rules)."""
    g = to_ud_graph(words, lemmas, tags, deps, heads)
    enhance(g)
    return extract_tuples(g)


def load_pipeline() -> tuple[Any, Lemmatizer]:
    """spaCy's model with only what SPICE reads (tagger and parser on tok2vec), multiplying
    through numpy's BLAS (:data:`MATMUL`), and the lemmatizer built from its tables."""
    nlp = load_spacy_model()
    lem = nlp.get_pipe("lemmatizer")
    tables: dict[str, dict[str, Any]] = {"exc": {}, "index": {}, "rules": {}}
    for pos in ("noun", "verb", "adj", "adv"):
        tables["exc"][pos] = dict(lem.lookups.get_table("lemma_exc").get(pos, {}))
        tables["index"][pos] = frozenset(lem.lookups.get_table("lemma_index").get(pos, []))
        tables["rules"][pos] = list(lem.lookups.get_table("lemma_rules").get(pos, []))
    keep = {"tok2vec", "tagger", "parser"}  # lemmas come from Lemmatizer, no NER needed
    nlp.select_pipes(disable=[p for p in nlp.pipe_names if p not in keep])
    use_numpy_blas(nlp)
    return nlp, Lemmatizer(tables)


def model_package() -> str:
    return _model_package("SPICE needs spaCy's English model `en_core_web_sm`")


def load_spacy_model():
    """The spaCy English small model (``en_core_web_sm``, or its renamed copy)."""
    return import_spacy().load(model_package(), exclude=["ner"])


def identity() -> str:
    """Parser identity for signatures and cache keys: spaCy and model versions, rules, BLAS.

    Raises :class:`MissingResourceError` when spaCy or the model is not installed.
    """
    import importlib.util

    from capeval_core.resources import package_version

    if importlib.util.find_spec("spacy") is None:
        raise MissingResourceError("SPICE needs spaCy; install it with `pip install spacy`")
    name = model_package()
    return (
        f"spacy-{package_version('spacy')}/{name.replace('_', '-')}-"
        f"{package_version(name.replace('_', '-'))}/rules-{RULES_VERSION}/{MATMUL}"
    )


def parse_texts(loaded: tuple[Any, Lemmatizer], texts: Sequence[str], batch_size: int):
    """The tuples of each text, parsed with spaCy's small model (from :func:`load_pipeline`)."""
    nlp, lemmatize = loaded
    return [doc_tuples(doc, lemmatize) for doc in nlp.pipe(texts, batch_size=batch_size)]


def doc_tuples(doc: Any, lemmatize: Lemmatizer) -> tuple[Tuple, ...]:
    """The tuples of one parsed Doc, its sentences concatenated (§6.1 step 4)."""
    result: list[Tuple] = []
    for sent in doc.sents:
        toks = [t for t in sent if not t.is_space]
        if not toks:
            continue
        pos = {t.i: k for k, t in enumerate(toks)}
        words = [t.text for t in toks]
        tags = [t.tag_ for t in toks]
        lemmas = [lemmatize(w, tag) for w, tag in zip(words, tags, strict=True)]
        heads = [pos.get(t.head.i, k) for k, t in enumerate(toks)]
        deps = [t.dep_ if heads[k] != k else "ROOT" for k, t in enumerate(toks)]
        result.extend(sentence_tuples(words, lemmas, tags, deps, heads))
    return tuple(result)
