"""tools/sge-dump.sh and tools/slurm-dump.sh write only a folder of their own: a new one, an empty one, or
an earlier dump of the same script (it holds .colmatch-dump); any other folder, a file or a link is refused
with exit 1 and left as it was. Grid Engine's and Slurm's commands are stand-ins on PATH that print a
fixed text, so no daemon is needed."""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(os.environ.get("COLMATCH_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
COMMANDS = {"sge-dump": ["qconf", "qhost", "qstat", "qselect"], "slurm-dump": ["scontrol", "squeue", "sshare", "sacctmgr"]}


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


def test_sge_dump_reads_the_hosts_side_by_side_in_their_order_and_stops_on_a_failure(tmp_path):
    """qconf -se shows one host a call: sge-dump runs 16 at a time and puts them together in qconf -sel's
    order (issue 43: 208 hosts took 6.5 minutes one by one); a host that qconf cannot show fails the dump."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    # 60 hosts, each answered after a delay that shuffles their finishing order; host h0013 may fail
    (bindir / "qconf").write_text(
        "#!/bin/sh\n"
        "case \"$1\" in\n"
        "  -sel) i=1; while [ $i -le 60 ]; do printf 'h%04d\\n' $i; i=$((i+1)); done ;;\n"
        "  -se) [ \"$2\" = global ] && { echo 'hostname global'; exit 0; }\n"
        "       [ \"$2\" = h0013 ] && [ -n \"$FAIL13\" ] && exit 1\n"
        "       n=$(echo \"$2\" | sed 's/^h0*//'); sleep 0.0$(( (61 - n) % 10 )); echo \"hostname $2\" ;;\n"
        "  *) echo \"qconf $*\" ;;\n"
        "esac\n")
    for cmd in ["qconf", "qhost", "qstat", "qselect"]:
        if cmd != "qconf":
            (bindir / cmd).write_text(f"#!/bin/sh\necho \"{cmd} $*\"\n")
        (bindir / cmd).chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}")
    r = subprocess.run(["bash", str(ROOT / "tools" / "sge-dump.sh"), str(tmp_path / "d")], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "d" / "qconf-se.txt").read_text().splitlines()
    assert lines == ["hostname global"] + [f"hostname h{i:04d}" for i in range(1, 61)]
    r = subprocess.run(["bash", str(ROOT / "tools" / "sge-dump.sh"), str(tmp_path / "e")],
                       env=dict(env, FAIL13="1"), capture_output=True, text=True)
    assert r.returncode == 1 and "qconf -se failed" in r.stderr, r.stderr
    assert not (tmp_path / "e").exists() and leftovers(tmp_path) == []
