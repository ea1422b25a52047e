"""Copies an .npz archive, renaming, dropping or zeroing arrays (standard
library only: an .npz is a zip of .npy members; --zero clears the data of a
float32 member, keeping its header; --set-int64 NAME:I=V sets element I of
an int64 member).
Usage: npz-edit.py IN OUT [--rename OLD=NEW]... [--drop NAME]...
       [--zero NAME]... [--set-int64 NAME:I=V]..."""

import sys
import zipfile


def main(argv):
    src, dst, rest = argv[0], argv[1], argv[2:]
    renames, drops, zeros, sets = {}, set(), set(), {}
    for flag, value in zip(rest[::2], rest[1::2]):
        if flag == "--rename":
            old, new = value.split("=")
            renames[old + ".npy"] = new + ".npy"
        elif flag == "--drop":
            drops.add(value + ".npy")
        elif flag == "--zero":
            zeros.add(value + ".npy")
        elif flag == "--set-int64":
            where, v = value.split("=")
            name, index = where.split(":")
            sets.setdefault(name + ".npy", []).append((int(index), int(v)))
        else:
            sys.exit(f"npz-edit.py: unknown flag {flag}")
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            if item.filename in drops:
                continue
            data = zin.read(item.filename)
            if item.filename in zeros:
                # .npy v1: magic (6), version (2), header length (2), header.
                start = 10 + int.from_bytes(data[8:10], "little")
                data = data[:start] + bytes(len(data) - start)
            for index, v in sets.get(item.filename, []):
                assert b"'<i8'" in data[:128], item.filename
                at = 10 + int.from_bytes(data[8:10], "little") + 8 * index
                data = data[:at] + v.to_bytes(8, "little", signed=True) + \
                    data[at + 8:]
            zout.writestr(renames.get(item.filename, item.filename), data)


if __name__ == "__main__":
    main(sys.argv[1:])
