"""The exceptions Tessera raises for what Core ML reports as errors."""

from __future__ import annotations

#: Core ML's error code for a feature of the wrong type, shape or name.
FEATURE_TYPE = 1


class TesseraError(ValueError):
    """An error Tessera reported (a model it cannot load, a prediction it refused).

    ``code`` is Core ML's ``MLModelError.Code`` raw value (0 generic, 1 feature type, 3 I/O,
    …), or -1 when the binding passed an argument wrongly. The message is Tessera's.
    """

    def __init__(self, message: str, code: int = 0):
        super().__init__(message)
        self.code = code


class FeatureTypeError(TesseraError, TypeError):
    """A feature of the wrong type, shape or name: both a ``ValueError`` and a ``TypeError``."""


def error_for(code: int, message: str) -> TesseraError:
    """The exception for an error the C ABI returned."""
    if code == FEATURE_TYPE:
        return FeatureTypeError(message, code)
    return TesseraError(message, code)
