"""rnnc: recurrent layers with per-step resets, compiled ahead of use.

`rnnc.library` compiles a model with the `rnn-compile` tool, caches the
shared library on disk and calls its C entry points; `precompile` fills a
cache ahead of use, `load` loads a library directory without the compiler
and `clear_cache` empties the cache (also `python3 -m rnnc precompile|cache`).
`rnnc.torch` (needs PyTorch) wraps it as drop-in `LSTM` and `GRU` modules,
`CIFG` (coupled input and forget gates) with `LSTM`'s interface and `MGU`
(the minimal gated unit) with `GRU`'s. `rnnc.jax` (needs JAX, not
PyTorch) runs them as XLA FFI calls with their own VJP.
"""

from .library import (Library, RNNCError, clear_cache, compile_model, load,
                      precompile)

__all__ = ["Library", "RNNCError", "clear_cache", "compile_model", "load",
           "precompile"]
