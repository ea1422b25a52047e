"""rnnc: recurrent layers with per-step resets, compiled ahead of use.

`rnnc.library` compiles a model with the `rnn-compile` tool, caches the
shared library on disk and calls its C entry points. `rnnc.torch` (needs
PyTorch) wraps it as drop-in `LSTM` and `GRU` modules, and `MGU` (the
minimal gated unit) with `GRU`'s interface.
"""

from .library import Library, RNNCError, compile_model

__all__ = ["Library", "RNNCError", "compile_model"]
