"""The one exception type of rnnc's Python package."""


class RNNCError(RuntimeError):
    """A model rnnc cannot compile or call, with one message saying why."""
