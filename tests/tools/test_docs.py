"""The manual (README.md, BENCHMARKS.md, docs/): its links resolve, its format pages hold the CLI
registry's option tables, every format and topic has a page linked from the README, the README stays a
short front door, BENCHMARKS.md opens with the current table, and every block marked runnable runs.

Run by ctest (`docs.*`): COLMATCH_CLI names the colmatch executable, COLMATCH_SOURCE_DIR the source tree,
PYTHONPATH (the python preset) the module for the Python blocks.
"""
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(os.environ.get("COLMATCH_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT / "tools"))
import docs  # noqa: E402  (tools/docs.py)

CLI = os.environ.get("COLMATCH_CLI", str(ROOT / "build/release/tools/colmatch"))
FORMAT_PAGES = ["native", "sge", "slurm", "vov", "dirac", "swf", "google2011", "openb", "cerit-sc"]
TOPIC_PAGES = ["simulate", "explain", "python", "sweep", "report", "reliability", "design"]


def test_every_link_of_the_manual_resolves():
    assert docs.check_links(ROOT) == []


def test_a_broken_link_or_anchor_is_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# Top\n\nSee [the page](docs/a.md#usage) and [b](docs/b.md).\n"
                                        "`[not a link](nowhere.md)`\n```\n[in code](nowhere.md)\n```\n")
    (tmp_path / "docs" / "a.md").write_text("# A\n\n## Use\n\n[up](../README.md#top)\n")
    found = docs.check_links(tmp_path)
    assert found == ["README.md:3: link to docs/a.md#usage: no heading gives #usage",
                     "README.md:3: link to docs/b.md: no such file"]


def test_anchors_follow_github_slugs(tmp_path):
    p = tmp_path / "x.md"
    p.write_text("# Grid Engine farms: `--format sge`\n## Use\n## Use\n```\n# not a heading\n```\n")
    assert docs.anchors(p) == {"grid-engine-farms---format-sge", "use", "use-1"}


@pytest.mark.parametrize("name", FORMAT_PAGES)
def test_each_format_page_exists_and_the_readme_links_it(name):
    assert (ROOT / "docs" / "formats" / f"{name}.md").is_file()
    assert f"(docs/formats/{name}.md)" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("name", TOPIC_PAGES)
def test_each_topic_page_exists_and_the_readme_links_it(name):
    assert (ROOT / "docs" / f"{name}.md").is_file()
    assert f"(docs/{name}.md)" in (ROOT / "README.md").read_text()


def test_every_page_of_docs_is_linked_from_somewhere():
    text = "".join(f.read_text() for f in docs.manual_files(ROOT))
    for page in (ROOT / "docs").rglob("*.md"):
        assert f"{page.name})" in text or f"{page.name}#" in text, f"{page} is linked from no page"


def test_the_format_pages_hold_the_registrys_option_tables():
    assert docs.check_options(CLI, ROOT) == []


def test_a_stale_option_table_is_found_and_updated(tmp_path):
    (tmp_path / "docs" / "formats").mkdir(parents=True)
    for name in docs.format_names(CLI):
        (tmp_path / "docs" / "formats" / f"{name}.md").write_text(
            f"# {name}\n\n{docs.BEGIN.format(name=name)}\nold table\n{docs.END}\n\nmore\n")
    found = docs.check_options(CLI, tmp_path)
    assert len(found) == len(docs.format_names(CLI)) and "differs" in found[0]
    assert docs.check_options(CLI, tmp_path, update=True) != []
    assert docs.check_options(CLI, tmp_path) == []
    assert (tmp_path / "docs/formats/sge.md").read_text().endswith(f"{docs.END}\n\nmore\n")


def test_the_registry_names_every_format_page():
    assert sorted(docs.format_names(CLI)) == sorted(n for n in FORMAT_PAGES if n != "cerit-sc")


def test_the_readme_is_a_short_front_door():
    lines = (ROOT / "README.md").read_text().split("\n")
    assert len(lines) <= 250
    text = "\n".join(lines)
    assert "bash tools/setup.sh && cmake --workflow --preset release && cmake --workflow --preset python && " \
           "cmake --workflow --preset sanitize" in text
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bash tools/setup.sh && cmake --workflow --preset release && cmake --workflow --preset python &&" in ci


def test_benchmarks_opens_with_the_current_table():
    first_screen = (ROOT / "BENCHMARKS.md").read_text().split("\n")[:40]
    assert any(line.startswith("| ") for line in first_screen)
    assert any("docs/benchmarks-history.md" in line for line in first_screen)


def test_runnable_blocks_are_found_in_order(tmp_path):
    p = tmp_path / "x.md"
    p.write_text("```sh runnable\necho a\n```\n```sh\nnot run\n```\n````python runnable\n```\nprint(1)\n````\n")
    blocks = docs.runnable_blocks(p)
    assert [(b.line, b.lang, b.code) for b in blocks] == [(1, "sh", "echo a\n"), (7, "python", "```\nprint(1)\n")]


def test_a_failing_block_is_reported(tmp_path):
    p = tmp_path / "x.md"
    p.write_text("```sh runnable\ncolmatch formats > f.txt\ngrep -q slurm f.txt\n```\n"
                 "```sh runnable\ncolmatch formats nosuch\n```\n")
    found = docs.run_blocks(docs.runnable_blocks(p), CLI, None, root=tmp_path)
    assert len(found) == 1 and "x.md:5: sh block exited 1" in found[0] and "no input format 'nosuch'" in found[0]


def _manual_with_blocks():
    return [f for f in docs.manual_files(ROOT) if docs.runnable_blocks(f)]


def test_the_readme_and_the_topic_pages_have_runnable_blocks():
    have = {f.relative_to(ROOT).as_posix() for f in _manual_with_blocks()}
    assert {"README.md", "docs/simulate.md", "docs/explain.md", "docs/sweep.md"} <= have


@pytest.mark.parametrize("page", [f.relative_to(ROOT).as_posix() for f in _manual_with_blocks()])
def test_every_runnable_block_runs(page):
    pythonpath = os.environ.get("PYTHONPATH")
    if pythonpath is not None and not (pathlib.Path(pythonpath.split(":")[0])).is_dir():
        pythonpath = None
    found = docs.run_blocks(docs.runnable_blocks(ROOT / page), CLI, pythonpath, root=ROOT)
    assert found == []


def test_the_command_line_tool_exits_1_on_a_finding(tmp_path):
    p = tmp_path / "x.md"
    p.write_text("```sh runnable\nexit 3\n```\n")
    r = subprocess.run([sys.executable, str(ROOT / "tools/docs.py"), "runnable", "--colmatch", CLI, str(p)],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "exited 3" in r.stderr
