"""The exceptions of rnnc's Python package: RNNCError, and for a bad
argument its subclasses that are also the ValueError or TypeError PyTorch
raises for one, so that `except ValueError` and `except RNNCError` both
catch them."""


class RNNCError(RuntimeError):
    """A model rnnc cannot compile or call, with one message saying why."""


class RNNCValueError(RNNCError, ValueError):
    """An argument of the right type with a value rnnc refuses: a shape, a
    dtype, a range, an unknown policy or option."""


class RNNCTypeError(RNNCError, TypeError):
    """An argument of the wrong type, or one the call does not take."""
