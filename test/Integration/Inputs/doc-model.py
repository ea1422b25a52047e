"""Checks that the example of docs/model-files.md (its first indented
block) is the function of Inputs/two-layer-lstm.mlir.
Usage: doc-model.py docs/model-files.md MODEL.mlir"""

import sys


def main(doc, model):
    lines = open(doc).read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("    func.func"))
    block = []
    for line in lines[start:]:
        if line and not line.startswith("    "):
            break
        block.append(line[4:])
    example = "\n".join(block).strip()
    source = open(model).read()
    function = source[source.index("func.func"):].strip()
    if example != function:
        print(doc, "has an example that differs from", model)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
