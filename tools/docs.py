#!/usr/bin/env python3
"""The manual's own checks: links, the format pages' option tables, and the runnable command blocks.

    python3 tools/docs.py links                       # every relative link of the manual resolves
    python3 tools/docs.py options --colmatch CLI      # docs/formats/*.md hold the registry's option tables
    python3 tools/docs.py options --colmatch CLI --update   # write them from `colmatch formats NAME --markdown`
    python3 tools/docs.py runnable --colmatch CLI [--pythonpath DIR] [FILE ...]   # run the marked blocks

The manual is README.md, BENCHMARKS.md and every Markdown file under docs/. A fenced block whose info
string is `sh runnable` or `python runnable` is a command a reader may paste: `runnable` runs the blocks
of one file in order, in one scratch folder holding links to the repository's datasets/ and tools/, with
`colmatch` on PATH and the Python module on PYTHONPATH, and fails on the first block that exits non-zero.
tests/tools/test_docs.py runs all three in ctest. Exit status: 0 when all hold, 1 otherwise (each finding
printed as FILE:LINE: what).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"(`+)(?:.*?)\1")
BEGIN = "<!-- BEGIN generated: colmatch formats {name} --markdown -->"
END = "<!-- END generated -->"


def manual_files(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """README.md, BENCHMARKS.md and docs/**/*.md under `root`, those that exist, sorted."""
    files = [root / "README.md", root / "BENCHMARKS.md"] + sorted((root / "docs").rglob("*.md"))
    return [f for f in files if f.is_file()]


def prose_lines(text: str, keep_code: bool = False):
    """(line number, line) outside fenced code blocks, inline code removed unless `keep_code`."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m:
            marker = m.group(2)
            if fence is None:
                fence = marker[0] * len(marker)
            elif marker.startswith(fence) and not m.group(3).strip():
                fence = None
            continue
        if fence is None:
            yield n, line if keep_code else INLINE_CODE.sub("", line)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, blanks as dashes."""
    text = INLINE_CODE.sub(lambda m: m.group(0).strip("`"), heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: pathlib.Path) -> set[str]:
    """The anchors the headings of a Markdown file give (repeats numbered as GitHub numbers them)."""
    seen: dict[str, int] = {}
    out = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8"), keep_code=True):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = slug(m.group(1))
        k = seen.get(s, 0)
        out.add(s if k == 0 else f"{s}-{k}")
        seen[s] = k + 1
    return out


def check_links(root: pathlib.Path = ROOT, files: list[pathlib.Path] | None = None) -> list[str]:
    """Findings `FILE:LINE: ...` for each relative link (or anchor) of the manual that does not resolve."""
    findings = []
    for f in files if files is not None else manual_files(root):
        for n, line in prose_lines(f.read_text(encoding="utf-8")):
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                dest = (f.parent / path).resolve() if path else f
                where = f"{f.relative_to(root)}:{n}"
                if not dest.exists():
                    findings.append(f"{where}: link to {target}: no such file")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    findings.append(f"{where}: link to {target}: no heading gives #{anchor}")
    return findings


def format_names(colmatch: str) -> list[str]:
    """The registered input formats, as `colmatch formats` lists them."""
    out = subprocess.run([colmatch, "formats"], check=True, capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def generated(colmatch: str, name: str) -> str:
    return subprocess.run([colmatch, "formats", name, "--markdown"], check=True, capture_output=True,
                          text=True).stdout


def check_options(colmatch: str, root: pathlib.Path = ROOT, update: bool = False) -> list[str]:
    """Each registered format has docs/formats/NAME.md holding, between its markers, exactly what
    `colmatch formats NAME --markdown` prints; with `update` the blocks are written instead."""
    findings = []
    for name in format_names(colmatch):
        page = root / "docs" / "formats" / f"{name}.md"
        if not page.is_file():
            findings.append(f"docs/formats/{name}.md: missing (format {name} is registered)")
            continue
        text = page.read_text(encoding="utf-8")
        begin = BEGIN.format(name=name)
        i, j = text.find(begin), text.find(END)
        if i < 0 or j < i:
            findings.append(f"docs/formats/{name}.md: no block between '{begin}' and '{END}'")
            continue
        body = text[i + len(begin):j]
        want = "\n" + generated(colmatch, name)
        if body != want:
            if update:
                page.write_text(text[:i + len(begin)] + want + text[j:], encoding="utf-8")
                findings.append(f"docs/formats/{name}.md: option table written")
            else:
                line = text[:i].count("\n") + 1
                findings.append(f"docs/formats/{name}.md:{line}: the option table differs from "
                                f"`colmatch formats {name} --markdown` (run tools/docs.py options --update)")
    return findings


@dataclass
class Block:
    file: pathlib.Path
    line: int
    lang: str
    code: str


def runnable_blocks(path: pathlib.Path) -> list[Block]:
    """The fenced blocks of `path` whose info string is `sh runnable` or `python runnable`, in order."""
    blocks, cur, fence = [], None, None
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        m = FENCE.match(line)
        if m and fence is None:
            fence = m.group(2)[0] * len(m.group(2))
            words = m.group(3).split()
            if len(words) >= 2 and words[1] == "runnable" and words[0] in ("sh", "python"):
                cur = Block(path, n, words[0], "")
            continue
        if m and m.group(2).startswith(fence) and not m.group(3).strip():
            if cur is not None:
                blocks.append(cur)
            cur, fence = None, None
            continue
        if cur is not None:
            cur.code += line + "\n"
    return blocks


def _shown(path: pathlib.Path, root: pathlib.Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def run_blocks(blocks: list[Block], colmatch: str, pythonpath: str | None, root: pathlib.Path = ROOT,
               timeout: float = 300) -> list[str]:
    """Runs `blocks` in order in one scratch folder (datasets/ and tools/ linked in, `colmatch` on
    PATH); findings name the first block that fails, with its output's tail."""
    findings = []
    with tempfile.TemporaryDirectory(prefix="colmatch-docs-") as tmp:
        work = pathlib.Path(tmp)
        for d in ("datasets", "tools"):
            (work / d).symlink_to(root / d)
        bindir = work / ".bin"
        bindir.mkdir()
        (bindir / "colmatch").symlink_to(pathlib.Path(colmatch).resolve())
        env = dict(os.environ)
        env["PATH"] = f"{bindir}:{env.get('PATH', '/usr/bin:/bin')}"
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        env["MPLBACKEND"] = "Agg"
        for b in blocks:
            if b.lang == "python" and not pythonpath:
                continue  # no module built (the release preset): the python preset runs these
            cmd = ["bash", "-euo", "pipefail", "-c", b.code] if b.lang == "sh" else ["/usr/bin/python3", "-c", b.code]
            try:
                r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                findings.append(f"{_shown(b.file, root)}:{b.line}: block ran over {timeout:.0f} s")
                break
            if r.returncode != 0:
                tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-12:])
                findings.append(f"{_shown(b.file, root)}:{b.line}: {b.lang} block exited {r.returncode}:\n{tail}")
                break
    return findings


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["links", "options", "runnable"])
    ap.add_argument("files", nargs="*", type=pathlib.Path)
    ap.add_argument("--colmatch", default=shutil.which("colmatch") or str(ROOT / "build/release/tools/colmatch"))
    ap.add_argument("--pythonpath", default=None)
    ap.add_argument("--update", action="store_true")
    a = ap.parse_intermixed_args(argv)
    if a.what == "links":
        findings = check_links()
    elif a.what == "options":
        findings = check_options(a.colmatch, update=a.update)
    else:
        findings = []
        for f in [p.resolve() for p in a.files] or manual_files():
            findings += run_blocks(runnable_blocks(f), a.colmatch, a.pythonpath)
    for f in findings:
        print(f, file=sys.stderr)
    return 1 if findings and not a.update else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
