"""pycocoevalcap's ``rouge``, mirrored by capeval (see :mod:`capeval_core.pycocoevalcap`)."""
