"""SPICE 1.0's pipeline, one module per stage (metric-spec §6).

For one caption, in the order SPICE 1.0 runs it:

1. :mod:`~capeval_core.spice.parse`: SPICE's parser turns the caption into tagged words and a
   dependency graph (through an on-disk cache and parse workers). The parser is
   ``stanford-pcfg`` (:mod:`~capeval_core.spice.stanford_pcfg`): SPICE-1.0's CoreNLP 3.6.0
   pipeline stage by stage: CoreNLP's tokens and sentences
   (:mod:`~capeval_core.spice.corenlp`), its PCFG itself (:mod:`~capeval_core.spice.pcfg`:
   the grammar shipped as arrays, the chart computed as the jar computes it, the tree
   converted to Universal Dependencies), :mod:`~capeval_core.spice.morphology` (CoreNLP's
   lemmas) and :mod:`~capeval_core.spice.ccprocess` (CoreNLP's collapsed, CC-processed
   dependencies): the jar's tuples. COCO 2014's captions come parsed
   (:mod:`~capeval_core.spice.shipped`);
2. :mod:`~capeval_core.spice.enhancement`: SceneGraphParser's enhancements (quantificational
   modifiers, pronoun resolution, §6.1 step 3);
3. :mod:`~capeval_core.spice.rules`: SpiceParser's tuple rules (§6.1 step 4), with
   :mod:`~capeval_core.spice.semgraph` reproducing the order in which CoreNLP's graphs and
   Semgrex visit nodes and edges (the tuples' order matters to step 4);
4. :mod:`~capeval_core.spice.graph`: tuples merged into a scene graph through METEOR's synonym
   sets (§6.1 step 5);
5. :mod:`~capeval_core.spice.matching`: candidate tuples matched against the reference graph,
   and the categories (§6.2).

:mod:`~capeval_core.spice.depgraph` holds the graph the stages pass along. Every stage is
checked against spice-1.0.jar on golden files (``tests/core/test_spice_*``), the PCFG's by
parsing them live. The metric itself is :class:`capeval_core.metrics.spice.Spice`.
"""
