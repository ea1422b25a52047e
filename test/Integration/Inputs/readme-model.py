"""Checks that the model-file example of README.md ("## Writing a model
file", the indented block) is the function of Inputs/two-layer-lstm.mlir.
Usage: readme-model.py README.md MODEL.mlir"""

import sys


def main(readme, model):
    text = open(readme).read()
    section = text.split("## Writing a model file", 1)[1].split("\n## ", 1)[0]
    lines = section.split("\n")
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
        print("README.md's model-file example differs from", model)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
