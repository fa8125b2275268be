#!/usr/bin/env python3
"""Functions of engine/ and loaders/ over 120 lines say why in the comment block just above them (issue 47: "no
function over ~120 lines in engine/ and loaders/ without a reason in a comment"): that block holds "Long (".

A function is found the way a reader finds one: a line at namespace or class level ending its signature with
`{`, not a control statement; its length runs to the brace that closes it (strings, characters and // comments
left out of the count of braces). Lambdas and local classes count as part of their function.
Usage: function_length.py SOURCE_DIR. Prints each function that lacks the reason (file:line, its lines) and exits
1, else prints how many long functions carry one.
"""
import pathlib
import re
import sys

LIMIT = 120
SIGNATURE = re.compile(r"\)\s*(const)?\s*(noexcept)?\s*(->\s*[\w:<>,\s*&]+)?\s*(override)?\s*\{$")
CONTROL = re.compile(r"\s*(\}\s*)?(if|for|while|switch|else|do|catch|try)\b")


def code_of(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return re.sub(r"//.*", "", line)


def reason_above(lines, start):
    """The comment lines directly above line `start` (and above its signature's earlier lines) hold "Long (".
    """
    i = start - 1
    while i >= 0 and lines[i].strip() and not lines[i].lstrip().startswith("//") and not lines[i].rstrip().endswith(
            (";", "}", "{")):
        i -= 1  # the signature's earlier lines
    block = []
    while i >= 0 and lines[i].lstrip().startswith("//"):
        block.append(lines[i])
        i -= 1
    return any("Long (" in b for b in block)


def long_functions(path):
    lines = path.read_text().split("\n")
    depth = 0
    start = None
    base = 0
    for i, raw in enumerate(lines):
        code = code_of(raw).rstrip()
        if start is None and depth <= 2 and SIGNATURE.search(code) and not CONTROL.match(code):
            start, base = i, depth
        depth += code.count("{") - code.count("}")
        if start is not None and depth <= base:
            if i - start + 1 > LIMIT:
                yield start, i - start + 1, reason_above(lines, start)
            start = None


def main(root):
    root = pathlib.Path(root)
    missing, carried = [], 0
    for folder in ("engine", "loaders"):
        for path in sorted(p for p in (root / folder).rglob("*") if p.suffix in (".cpp", ".hpp")):
            for start, n, ok in long_functions(path):
                if ok:
                    carried += 1
                else:
                    missing.append(f"{path.relative_to(root)}:{start + 1}: {n} lines, no \"Long (...)\" reason above it")
    for m in missing:
        print(m)
    if missing:
        return 1
    print(f"{carried} functions over {LIMIT} lines, each with its reason")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
