"""The inputs of gen_reference.py's cases: the float32 inputs drawn from
per-case seeds (make_inputs for the cases of one cell in every layer,
stack_inputs for stacks of layers of different cells and hidden sizes),
their reset patterns, the renaming of a stack's per-layer arrays to a
preset's, and the reproducible .npz encoding of the written files."""

import io
import zipfile
import zlib
from collections import namedtuple

import numpy as np

from reference_cells import GATES, HAS_C, STATES

# A case's sizes: steps, batch columns, input and hidden width.
Shape = namedtuple("Shape", "T B I H")


def shape_of(d):
    """(T, B, I, H) of an input dict."""
    T, B, I = d["x"].shape
    return Shape(T, B, I, d["h0"].shape[2])


def case_seed(name):
    # Stable across Python runs and platforms (unlike hash()).
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


# --------------------------------------------------------------------------
# Reset patterns
# --------------------------------------------------------------------------

def make_is_init(pattern, shape, rng):
    T, B = shape.T, shape.B
    m = np.zeros((T, B), dtype=bool)
    if pattern == "none":
        pass
    elif pattern == "all":
        m[:] = True
    elif pattern == "t0":
        m[0, :] = True
    elif pattern == "random":
        # ~5% resets; insist on at least two, one of them after t=0.
        while True:
            m = rng.random((T, B)) < 0.05
            if m.sum() >= 2 and m[1:].any():
                break
    elif pattern == "runs":
        # Some columns reset on several consecutive steps.
        m[3:7, 1] = True   # a run in the middle
        m[0:3, 3] = True   # a run from t=0
        m[8:, 4] = True    # a run to the end
        m[5, 5] = True     # an isolated reset for contrast
    elif pattern == "nevercol":
        # ~10% random resets, but one column never resets.
        never = int(rng.integers(B))
        while True:
            m = rng.random((T, B)) < 0.10
            m[:, never] = False
            others = [b for b in range(B) if b != never]
            # Every other column resets at least once after t=0.
            if all(m[1:, b].any() for b in others):
                break
        assert not m[:, never].any()
    else:
        raise ValueError(pattern)
    return m


# --------------------------------------------------------------------------
# The cases of one cell in every layer
# --------------------------------------------------------------------------

def make_inputs(case):
    cell, layers, pattern = case.cell, case.layers, case.pattern
    T, B, I, H = case.shape
    rng = np.random.default_rng(case_seed(case.name))
    G = GATES[cell]
    k = 1.0 / np.sqrt(H)
    f32 = np.float32

    def u(lo, hi, shape):
        return rng.uniform(lo, hi, size=shape).astype(f32)

    d = {}
    d["x"] = u(-1, 1, (T, B, I))
    d["h0"] = u(-0.5, 0.5, (layers, B, H))
    if cell in HAS_C:
        d["c0"] = u(-0.5, 0.5, (layers, B, H))
    for l in range(layers):
        in_l = I if l == 0 else H
        d[f"weight_ih_l{l}"] = u(-k, k, (G * H, in_l))
        d[f"weight_hh_l{l}"] = u(-k, k, (G * H, H))
        d[f"bias_ih_l{l}"] = u(-k, k, (G * H,))
        d[f"bias_hh_l{l}"] = u(-k, k, (G * H,))
    d["grad_y"] = u(-1, 1, (T, B, H))
    d["grad_h_n"] = u(-1, 1, (layers, B, H))
    if cell in HAS_C:
        d["grad_c_n"] = u(-1, 1, (layers, B, H))
    d["is_init"] = make_is_init(pattern, case.shape, rng)
    return d


# --------------------------------------------------------------------------
# Stacks of layers (the stack, reset-state and dropout presets)
# --------------------------------------------------------------------------

def stack_inputs(name, T, B, I, layers, pattern, reset_to="zero"):
    """With reset_to "step" or "column", each layer also has the states a
    reset enters, <s>_reset_l<k>: [T, B, H] or [B, H]."""
    rng = np.random.default_rng(case_seed(name))
    f32 = np.float32

    def u(lo, hi, shape):
        return rng.uniform(lo, hi, size=shape).astype(f32)

    d = {"x": u(-1, 1, (T, B, I))}
    in_l = I
    for l, (cell, H) in enumerate(layers):
        G = GATES[cell]
        k = 1.0 / np.sqrt(H)
        d[f"h0_l{l}"] = u(-0.5, 0.5, (B, H))
        if cell in HAS_C:
            d[f"c0_l{l}"] = u(-0.5, 0.5, (B, H))
        if reset_to != "zero":
            for s in STATES[cell]:
                d[f"{s}_reset_l{l}"] = u(
                    -0.5, 0.5, (T, B, H) if reset_to == "step" else (B, H))
        d[f"weight_ih_l{l}"] = u(-k, k, (G * H, in_l))
        d[f"weight_hh_l{l}"] = u(-k, k, (G * H, H))
        d[f"bias_ih_l{l}"] = u(-k, k, (G * H,))
        d[f"bias_hh_l{l}"] = u(-k, k, (G * H,))
        in_l = H
    d["grad_y"] = u(-1, 1, (T, B, in_l))
    for l, (cell, H) in enumerate(layers):
        d[f"grad_h_n_l{l}"] = u(-1, 1, (B, H))
        if cell in HAS_C:
            d[f"grad_c_n_l{l}"] = u(-1, 1, (B, H))
    d["is_init"] = make_is_init(pattern, Shape(T, B, I, in_l), rng)
    return d


def stacked_names(arrays, num_layers):
    """A stack's per-layer arrays (h0_l0, h0_l1, ...) stacked as rnn-run
    names a preset's ([L, B, H] h0, ...); other arrays unchanged."""
    out = dict(arrays)
    for base in ("h0", "c0", "h_n", "c_n", "grad_h0", "grad_c0", "grad_h_n",
                 "grad_c_n", "h_reset", "c_reset", "grad_h_reset",
                 "grad_c_reset"):
        keys = [f"{base}_l{l}" for l in range(num_layers)]
        if all(k in arrays for k in keys):
            out[base] = np.stack([arrays[k] for k in keys])
            for k in keys:
                del out[k]
    return out


# --------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------

def npz_bytes(arrays):
    """What np.savez (uncompressed) writes, but with a fixed member timestamp
    so that regenerating the files is byte-for-byte reproducible.  Mirrors
    numpy's _savez: ZIP_STORED members named <key>.npy, forced zip64."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, mode="w", compression=zipfile.ZIP_STORED,
                         allowZip64=True) as zf:
        for key, val in arrays.items():
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            with zf.open(info, "w", force_zip64=True) as fid:
                np.lib.format.write_array(fid, np.asanyarray(val),
                                          allow_pickle=False)
    return buf.getvalue()
