"""pycocoevalcap's ``bleu``, mirrored by capeval (see :mod:`capeval_core.pycocoevalcap`)."""
