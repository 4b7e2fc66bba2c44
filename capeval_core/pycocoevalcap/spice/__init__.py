"""pycocoevalcap's ``spice``, mirrored by capeval (see :mod:`capeval_core.pycocoevalcap`)."""
