"""pycocoevalcap's ``cider``, mirrored by capeval (see :mod:`capeval_core.pycocoevalcap`)."""
