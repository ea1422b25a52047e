"""Known answers for rnn.dropout's mask: the mapping docs/design.md documents,
implemented here from that text alone, checked element by element against
what rnn-run computes.

docs/design.md's rule: element n = (t B + b) H + h of a [T, B, H] tensor is
dropped when word n mod 4 of Philox4x32-10 with

    key     = (seed mod 2^32, seed div 2^32)
    counter = (n div 4, layer, offset mod 2^32, offset div 2^32)

is below floor(p 2^32), where rng = [seed, offset] (read as unsigned); a kept
element is multiplied by the float64 1 / (1 - p) rounded to the element type.

Checks, each against the Philox below (itself checked on Random123's
known-answer vectors), never against an earlier run of rnn-run:

  * the mask and the scaled values (bitwise) of a tiny model's
    x_dropped = rnn.dropout(x), f32 and f64, for seeds and offsets whose
    32-bit halves all differ (seed above 2^32 and above 2^63, offset
    2^32 + 5), so that swapping key words or counter words changes the mask;
  * the backward applies the same mask and scale to the cotangent;
  * the threshold rule at its edge: p = (w + 0.75) / 2^32 keeps the element
    whose word is w (floor, strict <), p = (w + 1) / 2^32 drops it;
  * rnn-run's default rng is [--seed, 0];
  * a --preset's dropout after layer l has layer = l.

Usage: check-dropout-known-answer.py TMP_DIR
"""

import os
import struct
import subprocess
import sys

from npzlite import read_npz, write_npz

M32 = 0xFFFFFFFF

# Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as
# easy as 1, 2, 3", SC'11), as Random123's philox4x32_R(10, ctr, key).
MUL0, MUL1 = 0xD2511F53, 0xCD9E8D57
WEYL0, WEYL1 = 0x9E3779B9, 0xBB67AE85


def philox4x32_10(ctr, key):
    """The four output words of counter words ctr[0..3] under key words
    key[0..1]."""
    x0, x1, x2, x3 = ctr
    k0, k1 = key
    for _ in range(10):
        hi0, lo0 = divmod(MUL0 * x0, 1 << 32)
        hi1, lo1 = divmod(MUL1 * x2, 1 << 32)
        x0, x1, x2, x3 = hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0
        k0, k1 = (k0 + WEYL0) & M32, (k1 + WEYL1) & M32
    return x0, x1, x2, x3


# philox4x32 10 lines of Random123's examples/kat_vectors (Random123 1.x
# distribution, as in github.com/girving/random123-manual at 61e8479):
# counter words, key words, output words. Each has one nonzero key word and
# a distinct nonzero counter word, so that word order matters.
RANDOM123_KAT = (
    ((0x00000000, 0x00000000, 0x00000001, 0x00000000),
     (0x00000001, 0x00000000),
     (0x07071C12, 0x428264B6, 0x3909104B, 0x6DA2BDA2)),
    ((0x00000000, 0x00000000, 0x00000000, 0x00000001),
     (0x00000000, 0x00000001),
     (0x96B27E8C, 0x28826D0F, 0x66D958EF, 0x081509DC)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
     (0x00000000, 0xFFFFFFFF),
     (0x08F7720C, 0x845EE9E0, 0x502CCD3D, 0xA9A00E27)),
)


def word(n, layer, seed, offset):
    """The Philox word that decides element n (docs/design.md)."""
    words = philox4x32_10((n >> 2, layer, offset & M32, offset >> 32),
                          (seed & M32, seed >> 32))
    return words[n & 3]


def threshold(p):
    """floor(p 2^32) of the float64 p (exact: scaling by 2^32 is)."""
    return int(p * 2.0 ** 32)


def mask_text(drop):
    """The expected mask, x where dropped, for the test's CHECK lines."""
    return "".join("x" if v else "." for v in drop)


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def scaled(x, p, dtype):
    """x times the float64 1 / (1 - p) rounded to dtype, in dtype (a product
    of two f32 is exact in float64, so rounding it once is f32's product)."""
    if dtype == "f32":
        return f32(x * f32(1.0 / (1.0 - p)))
    return x * (1.0 / (1.0 - p))


T, B, H = 3, 2, 5
N = T * B * H
NPZ = {"f32": "<f4", "f64": "<f8"}

MODEL = """\
func.func @masked(
    %x: tensor<{T}x{B}x{H}x{e}> {{rnn.name = "x"}},
    %is_init: tensor<{T}x{B}xi1> {{rnn.name = "is_init"}},
    %rng: tensor<2xi64> {{rnn.name = "rng"}},
    %h0: tensor<{B}x1x{e}> {{rnn.name = "h0"}},
    %c0: tensor<{B}x1x{e}> {{rnn.name = "c0"}},
    %w_ih: tensor<4x{H}x{e}> {{rnn.name = "weight_ih_l0"}},
    %w_hh: tensor<4x1x{e}> {{rnn.name = "weight_hh_l0"}},
    %b_ih: tensor<4x{e}> {{rnn.name = "bias_ih_l0"}},
    %b_hh: tensor<4x{e}> {{rnn.name = "bias_hh_l0"}})
    -> (tensor<{T}x{B}x1x{e}> {{rnn.name = "y"}},
        tensor<{T}x{B}x{H}x{e}> {{rnn.name = "x_dropped"}}) {{
  %xd = rnn.dropout %x rng(%rng) {{p = {p!r} : f64, layer = {layer} : i64}}
      : tensor<{T}x{B}x{H}x{e}>, tensor<2xi64>
  %y, %h_n, %c_n = rnn.lstm %xd reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<{T}x{B}x{H}x{e}>, tensor<{T}x{B}xi1>, tensor<{B}x1x{e}>,
         tensor<{B}x1x{e}>, tensor<4x{H}x{e}>, tensor<4x1x{e}>,
         tensor<4x{e}>, tensor<4x{e}>)
      -> (tensor<{T}x{B}x1x{e}>, tensor<{B}x1x{e}>, tensor<{B}x1x{e}>)
  return %y, %xd : tensor<{T}x{B}x1x{e}>, tensor<{T}x{B}x{H}x{e}>
}}
"""

# x and the cotangent of x_dropped: nonzero, with many mantissa bits, so
# that a scale rounded otherwise or a division by (1 - p) shows.
X = [(-1) ** i * (1.0 + i / 7.0 + 1.0 / 3.0) for i in range(N)]
G = [(-1) ** (i // 2) * (0.5 + i / 11.0) for i in range(N)]


def run(args, tag):
    r = subprocess.run(["rnn-run", "--iters=1", "--warmup=0", *args],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{tag}: rnn-run {' '.join(args)} failed:\n"
                 + r.stdout + r.stderr)


class Checker:
    def __init__(self, tmp):
        self.tmp = tmp
        self.failures = []
        self.alternatives = {"f32: divide by (1 - p)": 0,
                             "f32: scale computed in f32": 0,
                             "f64: divide by (1 - p)": 0}

    def expect(self, tag, got, want):
        differ = [n for n in range(len(want)) if got[n] != want[n]]
        if differ:
            n = differ[0]
            self.failures.append(
                f"{tag}: {len(differ)} of {len(want)} elements differ from "
                f"docs/design.md's rule, first n = {n}: {got[n]!r}, "
                f"expected {want[n]!r}")
        return not differ

    def model(self, tag, dtype, p, layer, seed, offset):
        """Checks x_dropped and grad_x of the tiny model against the rule;
        returns the mask rnn-run applied (x is nonzero)."""
        path = os.path.join(self.tmp, tag + ".mlir")
        with open(path, "w") as f:
            f.write(MODEL.format(T=T, B=B, H=H, e=dtype, p=p, layer=layer))
        d = NPZ[dtype]
        # rng holds the int64 whose bits are the unsigned seed and offset.
        signed = [v - (1 << 64) if v >> 63 else v for v in (seed, offset)]
        inputs = os.path.join(self.tmp, tag + ".in.npz")
        write_npz(inputs, {
            "x": (d, (T, B, H), X),
            "is_init": ("|b1", (T, B), [False] * (T * B)),
            "rng": ("<i8", (2,), signed),
            "h0": (d, (B, 1), [0.0] * B), "c0": (d, (B, 1), [0.0] * B),
            # weight_ih = 0: the LSTM adds nothing to grad_x.
            "weight_ih_l0": (d, (4, H), [0.0] * (4 * H)),
            "weight_hh_l0": (d, (4, 1), [0.0] * 4),
            "bias_ih_l0": (d, (4,), [0.0] * 4),
            "bias_hh_l0": (d, (4,), [0.0] * 4),
            "grad_y": (d, (T, B, 1), [1.0] * (T * B)),
            "grad_x_dropped": (d, (T, B, H), G)})
        out = os.path.join(self.tmp, tag + ".out.npz")
        run([path, "--inputs=" + inputs, "--outputs=" + out], tag)
        arrays = read_npz(out)
        limit = threshold(p)
        drop = [word(n, layer, seed, offset) < limit for n in range(N)]
        rnd = (lambda v: f32(v)) if dtype == "f32" else (lambda v: v)
        want_x = [0.0 if drop[n] else scaled(rnd(X[n]), p, dtype)
                  for n in range(N)]
        want_g = [0.0 if drop[n] else scaled(rnd(G[n]), p, dtype)
                  for n in range(N)]
        ok = self.expect(tag + " x_dropped", arrays["x_dropped"][2], want_x)
        ok &= self.expect(tag + " grad_x", arrays["grad_x"][2], want_g)
        # How many kept elements the likeliest other scalings would get
        # wrong: the check has power against them.
        for n in range(N):
            if drop[n]:
                continue
            x = rnd(X[n])
            if rnd(x / rnd(1.0 - p)) != want_x[n]:
                self.alternatives[dtype + ": divide by (1 - p)"] += 1
            if dtype == "f32" and f32(x * f32(1.0 / f32(1.0 - f32(p)))) != \
                    want_x[n]:
                self.alternatives["f32: scale computed in f32"] += 1
        got = [v == 0.0 for v in arrays["x_dropped"][2]]
        mask = mask_text(drop)
        print(f"{tag}: {dtype} p={p!r} layer={layer} seed={seed:#x} "
              f"offset={offset:#x}: mask {mask} "
              f"{'matches' if ok else 'DIFFERS'}")
        return got

    def default_rng(self, tag, seed):
        """Without --inputs rnn-run's rng is [--seed, 0] (x is generated,
        nonzero, so x_dropped is zero exactly where dropped)."""
        p, layer = 0.5, 6
        path = os.path.join(self.tmp, tag + ".mlir")
        with open(path, "w") as f:
            f.write(MODEL.format(T=T, B=B, H=H, e="f32", p=p, layer=layer))
        out = os.path.join(self.tmp, tag + ".out.npz")
        run([path, f"--seed={seed}", "--outputs=" + out], tag)
        got = [v == 0.0 for v in read_npz(out)["x_dropped"][2]]
        want = [word(n, layer, seed, 0) < threshold(p) for n in range(N)]
        ok = self.expect(tag + " mask", got, want)
        print(f"{tag}: --seed={seed:#x} without --inputs, p={p!r} "
              f"layer={layer}: rng = [seed, 0]: mask {mask_text(want)} "
              f"{'matches' if ok else 'DIFFERS'}")

    def preset(self, tag, seed, offset):
        """--preset=gru --layers=2: the dropout on layer 0's output has
        layer = 0. Its mask is read off y: with every step a reset (h = 0
        enters it), zero biases, W_ir = W_iz = 0 (z = 1/2) and W_in = I in
        layer 1, y = tanh(d) / 2 for layer 1's input d, zero exactly where d
        is; d's kept elements are positive (x > 0 and W_in > 0 in layer
        0)."""
        p, inp, hid = 0.3, 3, 5
        flags = ["--preset=gru", "--layers=2", f"--dropout={p!r}",
                 f"--seq-len={T}", f"--batch={B}", f"--input-size={inp}",
                 f"--hidden-size={hid}"]
        signed = [v - (1 << 64) if v >> 63 else v for v in (seed, offset)]
        eye = [1.0 if i == j else 0.0 for i in range(hid) for j in range(hid)]
        arrays = {
            "x": ("<f4", (T, B, inp),
                  [0.25 + 0.1 * i for i in range(T * B * inp)]),
            "is_init": ("|b1", (T, B), [True] * (T * B)),
            "rng": ("<i8", (2,), signed),
            "grad_y": ("<f4", (T, B, hid), [1.0] * (T * B * hid)),
            "h0": ("<f4", (2, B, hid), [0.0] * (2 * B * hid)),
            "grad_h_n": ("<f4", (2, B, hid), [0.0] * (2 * B * hid)),
        }
        for layer, width in ((0, inp), (1, hid)):
            # Gates r, z, n (torch.nn.GRU's order).
            n_rows = eye if layer else [0.5] * (hid * width)
            arrays[f"weight_ih_l{layer}"] = (
                "<f4", (3 * hid, width),
                [0.0] * (2 * hid * width) + n_rows)
            arrays[f"weight_hh_l{layer}"] = (
                "<f4", (3 * hid, hid), [0.0] * (3 * hid * hid))
            arrays[f"bias_ih_l{layer}"] = ("<f4", (3 * hid,), [0.0] * 3 * hid)
            arrays[f"bias_hh_l{layer}"] = ("<f4", (3 * hid,), [0.0] * 3 * hid)
        inputs = os.path.join(self.tmp, tag + ".in.npz")
        write_npz(inputs, arrays)
        out = os.path.join(self.tmp, tag + ".out.npz")
        run(flags + ["--inputs=" + inputs, "--outputs=" + out], tag)
        got = [v == 0.0 for v in read_npz(out)["y"][2]]
        want = [word(n, 0, seed, offset) < threshold(p)
                for n in range(T * B * hid)]
        ok = self.expect(tag + " mask", got, want)
        print(f"{tag}: --preset=gru --layers=2 --dropout={p!r} "
              f"seed={seed:#x} offset={offset:#x}: layer 0: mask "
              f"{mask_text(want)} {'matches' if ok else 'DIFFERS'}")


def main(tmp):
    os.makedirs(tmp, exist_ok=True)
    c = Checker(tmp)
    for ctr, key, want in RANDOM123_KAT:
        if philox4x32_10(ctr, key) != want:
            c.failures.append(f"Random123 known answer {ctr} {key} not "
                              f"reproduced")
    print(f"Random123 known answers: {len(RANDOM123_KAT)} checked")

    seed_hi = (0x00000007 << 32) | 0x0000007B    # halves 0x7b and 0x7
    seed_neg = 0xF00DFACE12345678                # above 2^63: int64 < 0
    off_hi = (1 << 32) + 5                       # halves 5 and 1
    c.model("small", "f32", 0.3, 0, 42, 0)
    c.model("words", "f32", 0.3, 3, seed_hi, off_hi)
    c.model("signed", "f32", 0.45, 1, seed_neg, 0xFFFFFFFF)
    c.model("double", "f64", 0.3, 2, seed_hi, off_hi)

    # The threshold at its edge: an element whose word w is mid-range.
    layer, seed, offset = 5, seed_neg, off_hi
    n0 = next(n for n in range(N)
              if 1 << 30 <= word(n, layer, seed, offset) < 3 << 30)
    w = word(n0, layer, seed, offset)
    for tag, p, dropped in (("edge-keep", (w + 0.75) / 2 ** 32, False),
                            ("edge-drop", (w + 1) / 2 ** 32, True)):
        got = c.model(tag, "f32", p, layer, seed, offset)
        if got[n0] != dropped:
            c.failures.append(f"{tag}: element {n0} (word {w:#x}) is "
                              f"{'dropped' if got[n0] else 'kept'} at "
                              f"p = {p!r}")
    print(f"edge: element {n0} (word {w:#010x}) kept at p = (w + 0.75) / 2^32,"
          f" dropped at p = (w + 1) / 2^32")

    c.default_rng("default-rng", seed_hi)
    c.preset("preset", seed_hi, off_hi)

    for what, count in c.alternatives.items():
        print(f"kept elements that '{what}' would change: "
              f"{'some' if count else 'none'}")
        if not count:
            c.failures.append(f"the data does not tell '{what}' apart")
    for f in c.failures:
        print("FAIL:", f)
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
