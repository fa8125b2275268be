"""tools/sge-dump.sh and tools/slurm-dump.sh write only a folder of their own: a new one, an empty one, or
an earlier dump of the same script (it holds .colmatch-dump); any other folder, a file or a link is refused
with exit 1 and left as it was. Grid Engine's and Slurm's commands are stand-ins on PATH that print a
fixed text, so no daemon is needed."""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(os.environ.get("COLMATCH_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
COMMANDS = {"sge-dump": ["qconf", "qhost", "qstat"], "slurm-dump": ["scontrol", "squeue"]}


@pytest.fixture(params=["sge-dump", "slurm-dump"])
def script(request, tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for cmd in COMMANDS[request.param]:
        (bindir / cmd).write_text(f"#!/bin/sh\necho \"{cmd} $*\"\n")
        (bindir / cmd).chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}")

    def run(out):
        return subprocess.run(["bash", str(ROOT / "tools" / f"{request.param}.sh"), str(out)], env=env,
                              capture_output=True, text=True)
    run.name = request.param
    return run


def leftovers(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir() if ".tmp." in p.name)


def test_a_new_folder_is_written_and_marked(script, tmp_path):
    r = script(tmp_path / "dump")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "dump" / ".colmatch-dump").read_text() == script.name + "\n"
    first = "qconf-sc.txt" if script.name == "sge-dump" else "scontrol-node.txt"
    assert (tmp_path / "dump" / first).read_text().startswith(("qconf -sc", "scontrol show node -o"))


def test_its_own_earlier_dump_and_an_empty_folder_are_replaced(script, tmp_path):
    (tmp_path / "empty").mkdir()
    assert script(tmp_path / "empty").returncode == 0
    assert script(tmp_path / "empty").returncode == 0
    assert (tmp_path / "empty" / ".colmatch-dump").exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("kind", ["folder", "file", "link", "other-script"])
def test_anything_else_is_refused_and_left_as_it_was(script, tmp_path, kind):
    out = tmp_path / "precious"
    if kind == "folder":
        out.mkdir()
        (out / "thesis.tex").write_text("years of work")
    elif kind == "file":
        out.write_text("years of work")
    elif kind == "link":
        (tmp_path / "target").mkdir()
        (tmp_path / "target" / "thesis.tex").write_text("years of work")
        out.symlink_to(tmp_path / "target")
    else:
        out.mkdir()
        other = "slurm-dump" if script.name == "sge-dump" else "sge-dump"
        (out / ".colmatch-dump").write_text(other + "\n")
        (out / "thesis.tex").write_text("years of work")
    r = script(out)
    assert r.returncode == 1
    assert "is not a dump" in r.stderr and str(out) in r.stderr
    kept = out if kind != "file" else None
    if kept is not None:
        assert (kept / "thesis.tex").read_text() == "years of work"
    else:
        assert out.read_text() == "years of work"
    assert leftovers(tmp_path) == []
