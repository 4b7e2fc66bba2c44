"""SPICE-1.0's own parser, CoreNLP 3.6.0's English PCFG, reimplemented without Java.

SPICE parses each caption with CoreNLP's exhaustive PCFG parser and converts the tree to
Universal Dependencies. Here, stage by stage, each checked against the jar:

- :mod:`.grammar`: the grammar and lexicon, shipped as arrays (written from CoreNLP's models
  jar by ``tools/spice_pcfg_grammar.py``), with :mod:`.javahash` for the rule orders Java's
  hash maps give;
- :mod:`.lexicon`: tag scores of words, unknown words through their signatures;
- :mod:`.cky`: the inside chart in float32 (its loops compiled in :mod:`.kernel`) and the best
  parse read back as CoreNLP reads it;
- :mod:`.trees`: the tree the parser prints after debinarizing and stripping its annotations;
- :mod:`.ud`: that tree converted to basic Universal Dependencies.
"""
