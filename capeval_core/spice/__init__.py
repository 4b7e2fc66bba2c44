"""SPICE 1.0's pipeline, one module per stage (metric-spec §6).

For one caption, in the order SPICE 1.0 runs it:

1. :mod:`~capeval_core.spice.parse`: a parser turns the caption into tokens, tags and a
   dependency graph (through an on-disk cache and parse workers); today's parser is
   :mod:`~capeval_core.spice.spacy_sm` (spaCy's small model converted to collapsed,
   CC-processed UD, §6.3);
2. :mod:`~capeval_core.spice.enhancement`: SceneGraphParser's enhancements (quantificational
   modifiers, pronoun resolution, §6.1 step 3);
3. :mod:`~capeval_core.spice.rules`: SpiceParser's tuple rules (§6.1 step 4);
4. :mod:`~capeval_core.spice.graph`: tuples merged into a scene graph through METEOR's synonym
   sets (§6.1 step 5);
5. :mod:`~capeval_core.spice.matching`: candidate tuples matched against the reference graph,
   and the categories (§6.2).

:mod:`~capeval_core.spice.depgraph` holds the graph the stages pass along;
:mod:`~capeval_core.spice.semgraph` the orders in which CoreNLP's graph hands out its nodes and
edges, which fix the order of the enhancements' and rules' matches. The metric itself is
:class:`capeval_core.metrics.spice.Spice`.
"""
