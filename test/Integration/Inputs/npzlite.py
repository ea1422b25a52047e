"""Reads and writes .npz files of plain little-endian arrays without numpy,
for the test scripts (the C++/lit suite needs no Python packages).

An array is (descr, shape, [values]) with descr one of DTYPES' keys.
"""

import ast
import struct
import zipfile

DTYPES = {"<f8": ("d", 8), "<f4": ("f", 4), "|b1": ("?", 1), "|u1": ("B", 1),
          "<i8": ("q", 8)}


def read_npz(path):
    """{name: (descr, shape, [values])}"""
    arrays = {}
    with zipfile.ZipFile(path) as z:
        for member in z.namelist():
            raw = z.read(member)
            assert raw[:6] == b"\x93NUMPY", member
            major = raw[6]
            if major == 1:
                (hlen,) = struct.unpack("<H", raw[8:10])
                start = 10
            else:
                (hlen,) = struct.unpack("<I", raw[8:12])
                start = 12
            header = ast.literal_eval(raw[start:start + hlen].decode("latin1"))
            assert not header["fortran_order"], member
            code, size = DTYPES[header["descr"]]
            shape = tuple(header["shape"])
            count = 1
            for d in shape:
                count *= d
            data = raw[start + hlen:start + hlen + count * size]
            values = list(struct.unpack("<%d%s" % (count, code), data))
            arrays[member[:-len(".npy")]] = (header["descr"], shape, values)
    return arrays


def write_npz(path, arrays):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, (descr, shape, values) in arrays.items():
            code, _ = DTYPES[descr]
            header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
                descr, repr(tuple(shape)))
            pad = 64 - (10 + len(header) + 1) % 64
            header = (header + " " * pad + "\n").encode("latin1")
            data = struct.pack("<%d%s" % (len(values), code), *values)
            z.writestr(name + ".npy", b"\x93NUMPY\x01\x00" +
                       struct.pack("<H", len(header)) + header + data)
