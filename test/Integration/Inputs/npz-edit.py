"""Copies an .npz archive, renaming or dropping arrays (standard library
only: an .npz is a zip of .npy members).
Usage: npz-edit.py IN OUT [--rename OLD=NEW]... [--drop NAME]..."""

import sys
import zipfile


def main(argv):
    src, dst, rest = argv[0], argv[1], argv[2:]
    renames, drops = {}, set()
    for flag, value in zip(rest[::2], rest[1::2]):
        if flag == "--rename":
            old, new = value.split("=")
            renames[old + ".npy"] = new + ".npy"
        elif flag == "--drop":
            drops.add(value + ".npy")
        else:
            sys.exit(f"npz-edit.py: unknown flag {flag}")
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            if item.filename in drops:
                continue
            zout.writestr(renames.get(item.filename, item.filename),
                          zin.read(item.filename))


if __name__ == "__main__":
    main(sys.argv[1:])
