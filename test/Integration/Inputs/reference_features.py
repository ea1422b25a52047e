"""The generators of gen_reference.py's presets beyond one cell in every
layer: stacks of layers of different cells and hidden sizes (STACKS),
resets that enter given states (RESET_CASES, rnn-run --reset-to) and
dropout between layers (DROPOUT_CASES, with the masks of rnn.dropout from
philox.py).  Each check_* function computes its presets' references,
checks them, prints a line per preset and adds the files to write."""

import numpy as np

import philox
from reference_cells import t64
from reference_inputs import npz_bytes, stack_inputs, stacked_names
from reference_runs import (TOL, max_rel, stack_episodes, stack_sequence,
                            stack_stepwise)


# --------------------------------------------------------------------------
# Stacks of layers of different cells and hidden sizes
# --------------------------------------------------------------------------

# (name, T, B, I, [(cell, H) per layer], reset pattern).
STACKS = (
    ("stack_gru10_lstm12_random", 7, 3, 5, (("gru", 10), ("lstm", 12)),
     "random"),
)


def check_stacks(files):
    """Adds each stack's files; returns False if a self-check fails."""
    ok = True
    for name, T, B, I, layers, pattern in STACKS:
        d = stack_inputs(name, T, B, I, layers, pattern)
        ref = stack_stepwise(d, layers, d["is_init"])
        ra, wa = max_rel(stack_stepwise(d, layers, np.zeros_like(d["is_init"])),
                         stack_sequence(d, layers))
        rb, wb = max_rel(ref, stack_episodes(d, layers))
        good = ra <= TOL and rb <= TOL
        ok &= good
        print(f"{name:23s} resets={int(d['is_init'].sum()):2d} "
              f"vs-nn={ra:.2e}({wa}) vs-episodes={rb:.2e}({wb}) "
              f"{'ok' if good else 'FAIL'}")
        files[name + ".in.npz"] = npz_bytes(d)
        files[name + ".ref.npz"] = npz_bytes(ref)
    return ok


# --------------------------------------------------------------------------
# Reset to a given state
# --------------------------------------------------------------------------

# Presets whose resets enter given states (rnn-run --reset-to): (name, T, B,
# I, cell, H, layers, reset pattern, "step" ([T, B, H] per layer and state)
# or "column" ([B, H])).
RESET_CASES = (
    ("lstm_l2_reset_step_random", 11, 6, 5, "lstm", 7, 2, "random", "step"),
    ("lstm_l1_reset_column_nevercol", 9, 5, 4, "lstm", 6, 1, "nevercol",
     "column"),
    ("gru_l2_reset_column_runs", 9, 6, 4, "gru", 6, 2, "runs", "column"),
    ("gru_l1_reset_step_all", 5, 4, 3, "gru", 5, 1, "all", "step"),
    ("mgu_l2_reset_step_random", 9, 5, 4, "mgu", 6, 2, "random", "step"),
    ("cifg_l2_reset_step_random", 9, 5, 4, "cifg", 6, 2, "random", "step"),
)


def check_reset_states(files):
    """Adds each reset-state case's files (preset names: h_reset [L, T, B,
    H] or [L, B, H], ...); returns False if a self-check fails."""
    ok = True
    for name, T, B, I, cell, H, L, pattern, reset_to in RESET_CASES:
        layers = ((cell, H),) * L
        d = stack_inputs(name, T, B, I, layers, pattern, reset_to)
        ref = stack_stepwise(d, layers, d["is_init"])
        no_reset = np.zeros_like(d["is_init"])
        ra, wa = max_rel(stack_stepwise(d, layers, no_reset),
                         stack_sequence(d, layers))
        rb, wb = max_rel(ref, stack_episodes(d, layers))
        # Every reset enters its state: the gradients of the reset states
        # are nonzero exactly where (per step) or in the columns where
        # (per column) an episode starts.
        starts = d["is_init"]
        for key, g in ref.items():
            if "_reset_l" not in key:
                continue
            nonzero = np.abs(g).max(axis=-1) > 0
            want = starts if g.ndim == 3 else starts.any(axis=0)
            if not np.array_equal(nonzero, want):
                print(f"{name}: {key} is not nonzero exactly at the resets")
                ra = max(ra, 1.0)
        good = ra <= TOL and rb <= TOL
        ok &= good
        print(f"{name:29s} resets={int(d['is_init'].sum()):2d} "
              f"vs-nn={ra:.2e}({wa}) vs-episodes={rb:.2e}({wb}) "
              f"{'ok' if good else 'FAIL'}")
        inputs = stacked_names(d, L)
        files[name + ".in.npz"] = npz_bytes(inputs)
        files[name + ".ref.npz"] = npz_bytes(stacked_names(ref, L))
        # The same inputs in float64, for the f64 runs and finite
        # differences (the reference is theirs too).
        files[name + ".f64.in.npz"] = npz_bytes(
            {k: v.astype(np.float64) if v.dtype == np.float32 else v
             for k, v in inputs.items()})
    return ok


# --------------------------------------------------------------------------
# Dropout between layers: Philox4x32-10 masks (see rnn.dropout)
# --------------------------------------------------------------------------

# Presets with dropout between layers: (name, T, B, I, cell, H, layers,
# reset pattern, p, [seed, offset]). The seed and offset have both 32-bit
# halves nonzero, so that every word of Philox's key and counter is tested.
DROPOUT_CASES = (
    ("lstm_l3_dropout_random", 11, 6, 5, "lstm", 7, 3, "random", 0.3,
     (0x0123456789ABCDEF, 0x0000000500000003)),
    ("gru_l2_dropout_runs", 9, 6, 4, "gru", 6, 2, "runs", 0.5,
     (0x7FFFFFFF00000001, 0x00000001FFFFFFFF)),
)


def dropout_keep(T, B, H, p, layer, seed, offset):
    """The mask of rnn.dropout: True where element (t, b, h) is kept."""
    return np.array([not philox.dropped(n, p, layer, seed, offset)
                     for n in range(T * B * H)]).reshape(T, B, H)


def check_dropout(files):
    """Adds each dropout case's files; returns False if a self-check fails."""
    ok = True
    for c, k in philox.check_known_answers():
        print(f"Philox known answer {c} {k} not reproduced FAIL")
        ok = False
    for name, T, B, I, cell, H, L, pattern, p, (seed, offset) in \
            DROPOUT_CASES:
        layers = ((cell, H),) * L
        d = stack_inputs(name, T, B, I, layers, pattern)
        keeps = [dropout_keep(T, B, H, p, l, seed, offset)
                 for l in range(L - 1)]
        drops = [t64(k / (1.0 - p)) for k in keeps]
        ref = stack_stepwise(d, layers, d["is_init"], drops)
        no_reset = np.zeros_like(d["is_init"])
        ra, wa = max_rel(stack_stepwise(d, layers, no_reset, drops),
                         stack_sequence(d, layers, drops))
        rb, wb = max_rel(ref, stack_episodes(d, layers, drops))
        dropped = sum(int((~k).sum()) for k in keeps)
        good = ra <= TOL and rb <= TOL
        ok &= good
        print(f"{name:23s} resets={int(d['is_init'].sum()):2d} "
              f"dropped={dropped}/{(L - 1) * T * B * H} "
              f"vs-nn={ra:.2e}({wa}) vs-episodes={rb:.2e}({wb}) "
              f"{'ok' if good else 'FAIL'}")
        inputs = stacked_names(d, L)
        inputs["rng"] = np.array([seed, offset], dtype=np.int64)
        files[name + ".in.npz"] = npz_bytes(inputs)
        files[name + ".ref.npz"] = npz_bytes(stacked_names(ref, L))
        # Inference drops nothing.
        plain = stack_stepwise(d, layers, d["is_init"])
        files[name + ".infer.ref.npz"] = npz_bytes(
            {k: v for k, v in stacked_names(plain, L).items()
             if not k.startswith("grad_")})
    return ok
