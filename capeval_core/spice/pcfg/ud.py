"""Basic Universal Dependencies from a phrase-structure tree, as CoreNLP 3.6.0 makes them.

The SPICE-1.0 jar parses each caption with CoreNLP's English PCFG and converts the tree to
English UD (``BasicDependenciesAnnotation``). This module reproduces that conversion without
Java, so the PCFG stage's trees give the jar's dependency trees:

1. reshape the tree (``ud_transform``);
2. find each phrase's head word (``ud_heads``);
3. at every phrase, top-down, relate it to the nodes its rules pick (``ud_relations``); the
   pair becomes a dependency between the two head words unless the dependent already has
   another governor or the edge would close a cycle;
4. attach words no rule reached to their phrase's head as ``dep``;
5. tidy up as CoreNLP does: a stranded "prep" becomes ``case`` of an earlier ``nmod`` (or
   ``nmod`` itself), "rel" becomes ``dobj``, subjects of passive auxiliaries become passive.

>>> from capeval_core.spice.pcfg.trees import read_tree
>>> tags, heads, labels = basic_dependencies(read_tree(
...     "(ROOT (NP (NP (DT a) (NN dog)) (PP (IN on) (NP (DT the) (NN grass)))))"))
>>> heads, labels
([1, 1, 4, 4, 1], ['det', 'ROOT', 'case', 'det', 'nmod'])
"""

from __future__ import annotations

from collections import deque

from capeval_core.spice.pcfg.trees import Tree
from capeval_core.spice.pcfg.ud_heads import highest_with_same_head, percolate
from capeval_core.spice.pcfg.ud_nodes import Node, from_tree, word_set
from capeval_core.spice.pcfg.ud_relations import is_ancestor, related
from capeval_core.spice.pcfg.ud_transform import normalize

__all__ = ["basic_dependencies"]


class _Graph:
    """Directed edges between tree nodes, each with the relation names that proposed it."""

    def __init__(self) -> None:
        self.out: dict[int, dict[int, list[str]]] = {}
        self.into: dict[int, set[int]] = {}
        self.nodes: dict[int, Node] = {}

    def add(self, gov: Node, dep: Node, name: str) -> None:
        for n in (gov, dep):
            self.nodes.setdefault(id(n), n)
            self.out.setdefault(id(n), {})
            self.into.setdefault(id(n), set())
        self.out[id(gov)].setdefault(id(dep), []).append(name)
        self.into[id(dep)].add(id(gov))

    def parents(self, node: Node) -> set[int]:
        return self.into.get(id(node), set())

    def has_edge(self, gov: Node, dep: Node) -> bool:
        return id(dep) in self.out.get(id(gov), {})

    def reaches(self, start: Node, goal: Node, directed: bool) -> bool:
        """A path from ``start`` to ``goal`` (both must be in the graph, as CoreNLP requires)."""
        if id(start) not in self.out or id(goal) not in self.out:
            return False
        seen = {id(start)}
        queue = deque([id(start)])
        while queue:
            cur = queue.popleft()
            if cur == id(goal):
                return True
            nxt = set(self.out[cur])
            if not directed:
                nxt |= self.into[cur]
            for n in nxt - seen:
                seen.add(n)
                queue.append(n)
        return False


def _most_specific(names: list[str]) -> str:
    """CoreNLP's choice among the relations proposed for one pair: walk them in name order,
    keeping each that refines the current one (so unrelated ones lose to the first by name)."""
    chosen = "dep"
    for name in sorted(set(names)):
        if is_ancestor(chosen, name):
            chosen = name
    return chosen


def _build(root: Node) -> _Graph:
    graph = _Graph()
    for t in root.walk():
        if not t.phrasal:
            continue
        t_high = highest_with_same_head(t)
        for name, u in related(t):
            u_high = highest_with_same_head(u)
            if u_high is t_high:
                continue
            parents = graph.parents(u_high)
            if (not parents or id(t_high) in parents) and not graph.reaches(
                u_high, t_high, directed=True
            ):
                graph.add(t_high, u_high, name)
    _attach_stranded(root, root, False, graph)
    return graph


def _attach_stranded(t: Node, root: Node, attach: bool, graph: _Graph) -> None:
    """A maximal phrase no rule connected to the tree hangs off its parent's head as ``dep``."""
    if t.leaf:
        return
    if attach:
        assert t.parent is not None
        parent = highest_with_same_head(t.parent)
        if not graph.has_edge(parent, t) and not graph.reaches(root, t, directed=False):
            graph.add(parent, t, "dep")
    for kid in t.kids:
        _attach_stranded(kid, root, kid.head is not t.head, graph)


def _typed(graph: _Graph) -> list[list]:
    """[governor, relation, dependent] triples over 1-based word indices."""
    deps = []
    for gov_id, kids in graph.out.items():
        gov = graph.nodes[gov_id].head
        assert gov is not None
        for dep_id, names in kids.items():
            dep = graph.nodes[dep_id].head
            assert dep is not None
            deps.append([gov.index, _most_specific(names), dep.index])
    return deps


def _convert_rel(deps: list[list]) -> None:
    """A "prep" (a preposition left without its object) becomes ``case`` of the governor's
    earlier ``nmod``/"rel" dependent, or else ``nmod``; the remaining "rel" become ``dobj``."""
    for prep in [d for d in deps if d[1] == "prep"]:
        gov, _, word = prep
        hosts = sorted(
            (d for d in deps if d[0] == gov and d[1] in ("nmod", "rel") and d[2] <= word),
            key=lambda d: d[2],
        )
        if hosts:
            host = hosts[0]
            deps.remove(prep)
            deps.append([host[2], "case", word])
            if host[1] == "rel":
                host[1] = "nmod"
        else:
            prep[1] = "nmod"
    for d in deps:
        if d[1] == "rel":
            d[1] = "dobj"


#: Lemmas of verbs taking "NP V S-INF" (VerbNet 3.2, as CoreNLP lists them): a WH word
#: attached to one of these with an xcomp belongs to the embedded verb.
_CONTROL_NO_OBJECT = word_set(
    "acquiesce submit bow defer accede succumb yield capitulate despise disdain dislike regret "
    "like love enjoy fear hate pledge proceed begin start commence recommence resume undertake "
    "ally collaborate collude conspire discriminate legislate partner protest rebel retaliate "
    "scheme sin befriend continue broadcast cable e-mail fax modem netmail phone radio relay "
    "satellite semaphore sign signal telecast telegraph telephone telex wire wireless ache "
    "crave fall hanker hope hunger itch long lust pine pray thirst wish yearn dangle babble "
    "bark bawl bellow bleat blubber boom bray burble bluster cackle call carol chant chatter "
    "chirp chortle chuckle cluck coo croak croon crow cry drawl drone gabble gasp gibber groan "
    "growl grumble grunt hiss holler hoot howl jabber keen lilt lisp mewl moan mumble murmur "
    "mutter nasal natter pant prattle purr quaver rage rant rasp roar rumble scream screech "
    "shout shriek sibilate simper sigh sing smatter smile snap snarl snivel snuffle splutter "
    "squall squawk squeak squeal stammer stemmer stutter thunder tisk trill trumpet twang "
    "twitter vociferate wail warble wheeze whimper whine whisper whistle witter whoop yammer "
    "yap yell yelp yodel blare gurgle hum neglect fail forego forgo flub overleap manage omit "
    "seem appear prove try attempt intend expect mean plan propose think aim dream imagine "
    "yen"
)


def _correct_wh(deps: list[list], words: list[str], tags: list[str]) -> None:
    """A WH object of a control verb ("what does she seem to have") moves to the embedded
    verb when the control verb has an object (the WH word itself counts, as in CoreNLP's
    pattern) or cannot take one. CoreNLP looks at one match per verb: its first xcomp and its
    first dep/dobj dependent (in word order, as its hash maps of small indices iterate), so a
    WH word after another dep/dobj dependent stays."""
    from capeval_core.spice.morphology import lemma

    for root in sorted({d[0] for d in deps}):
        out = sorted((d for d in deps if d[0] == root), key=lambda d: d[2])
        embedded = next((d[2] for d in out if d[1] == "xcomp"), None)
        wh = next((d for d in out if d[1] in ("dep", "dobj")), None)
        if embedded is None or wh is None or not tags[wh[2] - 1].startswith("W"):
            continue
        has_object = any(d[1] in ("dobj", "iobj") for d in out)
        if has_object or lemma(words[root - 1], tags[root - 1]).lower() in _CONTROL_NO_OBJECT:
            deps.remove(wh)
            deps.append([embedded, "dobj", wh[2]])


def _correct_passive_subjects(deps: list[list]) -> None:
    passive = {d[0] for d in deps if d[1] == "auxpass"}
    for d in deps:
        if d[0] in passive and d[1] in ("nsubj", "csubj"):
            d[1] = "nsubjpass" if d[1] == "nsubj" else "csubjpass"


def basic_dependencies(tree: Tree) -> tuple[list[str], list[int], list[str]]:
    """(tags, heads, labels) per word: heads 0-based with the root word its own head, root
    label "ROOT" (the basic UD tree CoreNLP 3.6.0 reads off ``tree``).

    >>> from capeval_core.spice.pcfg.trees import read_tree
    >>> basic_dependencies(read_tree("(ROOT (S (NP (DT a) (NN dog)) (VP (VBZ runs))))"))
    (['DT', 'NN', 'VBZ'], [1, 2, 2], ['det', 'nsubj', 'ROOT'])
    """
    tags = [p.label for p in tree.preterminals()]
    n = len(tags)
    root = normalize(from_tree(tree))
    percolate(root)
    graph = _build(root)
    deps = _typed(graph)
    _correct_wh(deps, tree.leaves(), tags)
    _convert_rel(deps)
    _correct_passive_subjects(deps)
    assert root.head is not None
    root_word = root.head.index
    heads, labels = [-1] * n, [""] * n
    for gov, name, dep in sorted(deps, key=lambda d: (d[2], d[0], d[1])):
        if heads[dep - 1] < 0:
            heads[dep - 1], labels[dep - 1] = gov - 1, name
    heads[root_word - 1], labels[root_word - 1] = root_word - 1, "ROOT"
    for i in range(n):
        if heads[i] < 0:  # CoreNLP would leave such a word out of the graph
            heads[i], labels[i] = root_word - 1, "dep"
    return tags, heads, labels
