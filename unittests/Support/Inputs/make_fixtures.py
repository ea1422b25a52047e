#!/usr/bin/env python3
"""Regenerates the .npz fixtures used by unittests/Support/NpzTest.cpp.

Run from anywhere:  python3 make_fixtures.py
The files are written next to this script. All values are deterministic
(arange-based) so that the C++ tests can recompute them independently; keep
this file and the expectations in NpzTest.cpp in sync.
"""

import io
import os
import struct
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def reference_arrays():
    """The arrays stored in savez.npz and savez_compressed.npz."""
    return {
        # f32[2, 3]: 0.5 * i - 1
        "a": (np.arange(6, dtype=np.float32) * np.float32(0.5) - 1).reshape(2, 3),
        # f64[2, 3, 4]: i / 7
        "b": (np.arange(24, dtype=np.float64) / 7.0).reshape(2, 3, 4),
        # bool[5]: i % 2 == 0
        "c": np.arange(5) % 2 == 0,
        # u8[10]: 3 * i
        "d": np.arange(10, dtype=np.uint8) * np.uint8(3),
        # i32[3, 2]: i - 2
        "e": (np.arange(6, dtype=np.int32) - 2).reshape(3, 2),
        # i64[6]: i - 3, with a large value at the end
        "f": np.array([-3, -2, -1, 0, 1, 2**40], dtype=np.int64),
        # f32[] scalar: 3.25
        "g": np.array(3.25, dtype=np.float32),
        # f32[0, 4]: empty
        "h": np.zeros((0, 4), dtype=np.float32),
        # f64[200, 5]: (i % 17) / 4 -- big enough for deflate to matter
        "big": ((np.arange(1000) % 17) / 4.0).reshape(200, 5),
    }


def npy_bytes(array, version=None):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


def write_zip(name, members, compression=zipfile.ZIP_STORED):
    """Writes {member name: bytes} with Python's zipfile."""
    with zipfile.ZipFile(path(name), "w", compression=compression) as zf:
        for member, data in members.items():
            zf.writestr(member, data)


def write_zip64(name, members):
    """Hand-writes a stored zip whose central directory uses zip64 extra
    fields (sizes and offsets saturated to 0xFFFFFFFF) and zip64 end records,
    as zipfile does for archives over 4 GiB."""
    out = bytearray()
    central = bytearray()
    for member, data in members.items():
        fname = member.encode()
        crc = zlib.crc32(data)
        offset = len(out)
        local_extra = struct.pack("<HHQQ", 1, 16, len(data), len(data))
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0x21, crc,
                           0xFFFFFFFF, 0xFFFFFFFF, len(fname), len(local_extra))
        out += fname + local_extra + data
        extra = struct.pack("<HHQQQ", 1, 24, len(data), len(data), offset)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0,
                               0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                               len(fname), len(extra), 0, 0, 0, 0, 0xFFFFFFFF)
        central += fname + extra
    cd_offset = len(out)
    out += central
    zip64_eocd = len(out)
    out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0,
                       len(members), len(members), len(central), cd_offset)
    out += struct.pack("<IIQI", 0x07064B50, 0, zip64_eocd, 1)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF,
                       0xFFFFFFFF, 0xFFFFFFFF, 0)
    with open(path(name), "wb") as f:
        f.write(out)


def check(name, expected):
    """Makes sure numpy itself reads the fixture back as intended."""
    with np.load(path(name)) as z:
        assert sorted(z.files) == sorted(expected), (name, z.files)
        for key, value in expected.items():
            got = z[key]
            assert got.dtype == value.dtype and got.shape == value.shape, key
            assert np.array_equal(got, value), key


def main():
    ref = reference_arrays()

    # What numpy writes: stored and deflated members (both with zip64 local
    # extra fields, since numpy forces zip64 for every member).
    np.savez(path("savez.npz"), **ref)
    check("savez.npz", ref)
    np.savez_compressed(path("savez_compressed.npz"), **ref)
    check("savez_compressed.npz", ref)

    # .npy format versions 2.0 and 3.0 (numpy picks 1.0 unless forced).
    v = np.arange(4, dtype=np.float64) + 0.5
    write_zip("npy_versions.npz", {
        "v2.npy": npy_bytes(v, version=(2, 0)),
        "v3.npy": npy_bytes(v * 2, version=(3, 0)),
    })
    check("npy_versions.npz", {"v2": v, "v3": v * 2})

    # Headers written by hand in the ways other writers (or old numpy)
    # spell them: '=' byte order, double quotes, Python 2 long suffix, no
    # trailing comma.
    hand = bytearray(b"{\"descr\": \"=i4\", \"shape\": (2L, 2L), "
                     b"\"fortran_order\": False}")
    hand += b" " * (63 - (10 + len(hand)) % 64) + b"\n"
    hand = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hand)) + hand
    hand += np.arange(4, dtype="<i4").tobytes()
    write_zip("hand_header.npz", {"m.npy": bytes(hand)})

    # zip64 central directory and end records.
    zip64_values = np.arange(5, dtype=np.int64) * 11
    write_zip64("zip64.npz", {"z.npy": npy_bytes(zip64_values)})
    check("zip64.npz", {"z": zip64_values})

    # Errors.
    np.savez(path("fortran.npz"),
             x=np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    np.savez(path("bigendian.npz"), x=np.arange(3, dtype=">f8"))
    np.savez(path("float16.npz"), x=np.arange(3, dtype=np.float16))
    with open(path("notzip.npz"), "wb") as f:
        f.write(b"this is not a zip file, just some text\n")
    with open(path("savez.npz"), "rb") as f:
        whole = f.read()
    with open(path("truncated.npz"), "wb") as f:
        f.write(whole[: len(whole) // 2])
    # Header says 4 float32 elements (16 bytes) but only 12 bytes follow.
    short = npy_bytes(np.arange(4, dtype=np.float32))[:-4]
    write_zip("size_mismatch.npz", {"s.npy": short})


if __name__ == "__main__":
    main()
