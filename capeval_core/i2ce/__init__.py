"""I²CE: the seed paper's learned sentence encoder (numpy at run time, torch only to train)."""

from capeval_core.i2ce.model import I2CEEncoder, default_encoder, load_encoder

__all__ = ["I2CEEncoder", "default_encoder", "load_encoder"]
