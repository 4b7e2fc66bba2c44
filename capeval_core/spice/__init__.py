"""SPICE 1.0's pipeline, one module per stage (metric-spec §6).

For one caption, in the order SPICE 1.0 runs it:

1. :mod:`~capeval_core.spice.parse`: a parser turns the caption into tagged words and a
   dependency graph (through an on-disk cache and parse workers). Three parsers:

   * ``stanford-pcfg`` (:mod:`~capeval_core.spice.stanford_pcfg`, the default): SPICE-1.0's
     CoreNLP 3.6.0 pipeline stage by stage: CoreNLP's tokens, its PCFG itself
     (:mod:`~capeval_core.spice.pcfg`: the grammar shipped as arrays, the chart computed as
     the jar computes it, the tree converted to Universal Dependencies),
     :mod:`~capeval_core.spice.morphology` (CoreNLP's lemmas) and
     :mod:`~capeval_core.spice.ccprocess` (CoreNLP's collapsed, CC-processed dependencies):
     the jar's tuples. COCO val2014's captions come parsed (:mod:`~capeval_core.spice.shipped`);
   * ``stanford-emulation`` (:mod:`~capeval_core.spice.stanford`): the same pipeline with a
     tagger, encoders and a tree scorer (:mod:`~capeval_core.spice.biaffine`) trained on the
     jar's own parses in place of the PCFG: faster, close to the jar, not equal;
   * ``spacy-sm`` (:mod:`~capeval_core.spice.spacy_sm`): spaCy's small model, its labels
     converted to that graph by hand-written rules (§6.3);

2. :mod:`~capeval_core.spice.enhancement`: SceneGraphParser's enhancements (quantificational
   modifiers, pronoun resolution, §6.1 step 3);
3. :mod:`~capeval_core.spice.rules`: SpiceParser's tuple rules (§6.1 step 4), with
   :mod:`~capeval_core.spice.semgraph` reproducing the order in which CoreNLP's graphs and
   Semgrex visit nodes and edges (the tuples' order matters to step 4);
4. :mod:`~capeval_core.spice.graph`: tuples merged into a scene graph through METEOR's synonym
   sets (§6.1 step 5);
5. :mod:`~capeval_core.spice.matching`: candidate tuples matched against the reference graph,
   and the categories (§6.2).

:mod:`~capeval_core.spice.depgraph` holds the graph the stages pass along and
:mod:`~capeval_core.spice.spacy_runtime` how the spaCy-based parsers load spaCy. Every stage
but the trained parser is checked against spice-1.0.jar on golden files
(``tests/core/test_spice_*``), the PCFG's by parsing them live.
The metric itself is :class:`capeval_core.metrics.spice.Spice`.
"""
