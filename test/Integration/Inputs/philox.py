"""Philox4x32-10 (Salmon et al., SC'11; Random123's philox4x32_R with
R = 10) in plain Python, checked on Random123's known-answer vectors, and
the mask of rnn.dropout computed with it: the independent reference of the
dropout tests (gen_reference.py, check-dropout-mask.py and the rnnc.torch
tests)."""

import math

M32 = 0xFFFFFFFF

# Random123's known-answer vectors (kat_vectors): counter, key, output.
KNOWN_ANSWERS = (
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((M32,) * 4, (M32,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
     (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
)


def philox4x32_10(c, k):
    """The four output words of counter words c[0..3] under key words
    k[0..1]."""
    c, (k0, k1) = list(c), k
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & M32, (p0 >> 32) ^ c[3] ^ k1,
             p0 & M32]
    return tuple(c)


def check_known_answers():
    """The known-answer vectors this implementation does not reproduce."""
    return [(c, k) for c, k, want in KNOWN_ANSWERS
            if philox4x32_10(c, k) != want]


def dropped(n, p, layer, seed, offset):
    """Whether rnn.dropout drops element n (= (t B + b) H + h) of site
    `layer` under rng = [seed, offset]."""
    words = philox4x32_10((n >> 2, layer, offset & M32, offset >> 32),
                          (seed & M32, seed >> 32))
    return words[n & 3] < int(math.ldexp(p, 32))
