"""pycocoevalcap's ``meteor``, mirrored by capeval (see :mod:`capeval_core.pycocoevalcap`)."""
