"""pycocoevalcap's ``tokenizer``, mirrored by capeval (see :mod:`capeval_core.pycocoevalcap`)."""
