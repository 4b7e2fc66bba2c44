"""Package version, kept apart so every module can import it without cycles."""

__version__ = "0.9.3"
