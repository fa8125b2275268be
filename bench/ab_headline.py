# Same-run before/after of the headline commands: bench/ab_headline.py ROUNDS with BEFORE and AFTER set to
# two colmatch binaries (default: /tmp/base/colmatch and build/release/tools/colmatch); prints a table row
# per figure (whole command and engine part, before, after, ratio), minimum of the rounds, alternating.
import importlib.util
import json
import os
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("headline", HERE / "headline.py")
h = importlib.util.module_from_spec(spec); spec.loader.exec_module(h)
clis = {"before": os.environ.get("BEFORE", "/tmp/base/colmatch"),
        "after": os.environ.get("AFTER", str(HERE.parent / "build" / "release" / "tools" / "colmatch"))}
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
res = {}
for e in h.ENTRIES:
    if not h.available(e): continue
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for side, cli in clis.items():
                out = f"{tmp}/{side}{r}"
                s, summary = h.timed(e["cmd"].format(cli=cli, raw=h.RAW, out=out, root=h.ROOT))
                core = json.loads(summary).get("seconds", {})
                core = core.get("match_total", core.get("simulate"))
                d = res.setdefault(e["name"], {}).setdefault(side, {"whole": [], "core": []})
                d["whole"].append(s); d["core"].append(core)
    b, a = res[e["name"]]["before"], res[e["name"]]["after"]
    print(f"| {e['what']} | {min(b['whole']):.3f} s | {min(a['whole']):.3f} s | {min(a['whole'])/min(b['whole']):.2f} | {min(b['core']):.3f} s | {min(a['core']):.3f} s | {min(a['core'])/min(b['core']):.2f} |", flush=True)
