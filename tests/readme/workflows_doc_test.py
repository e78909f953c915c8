#!/usr/bin/env python3
"""Runs the ```sh blocks of docs/WORKFLOWS.md as a reader pastes them: in order, in one shell,
from the repository root (the release build's binaries on PATH, as the page says).

Usage: workflows_doc_test.py <repo root>

Rewrites: port 8090 becomes a free loopback port, /tmp/my-workflows a fresh directory. Then
checks that the page's claims hold: the workflow validates, is a skill of the card, waits in
the inbox, completes with the artifacts the page names once approved; and that a template
naming no input is refused, as the page says, with exit status 1.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

ROOT = sys.argv[1]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def blocks(text):
    out, cur = [], None
    for line in text.splitlines():
        if cur is None and line.strip() == "```sh":
            cur = []
        elif cur is not None and line.strip() == "```":
            out.append("\n".join(cur))
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def main():
    page = open(os.path.join(ROOT, "docs", "WORKFLOWS.md")).read()
    found = blocks(page)
    assert len(found) == 3, f"expected the page's three blocks, found {len(found)}"
    work = tempfile.mkdtemp(prefix="a2ad-workflows-doc-")
    wf_dir = os.path.join(work, "my-workflows")
    script = "set -e\n" + "\n".join(found)
    script = script.replace("/tmp/my-workflows", wf_dir).replace("8090", str(free_port()))
    run = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    out = run.stdout
    assert run.returncode == 0, f"exit {run.returncode}\n{out}\n{run.stderr}"
    assert "ok     expense-claim 1.0.0: 3 node(s), 2 edge(s)" in out, out
    assert re.search(r"^  skill expense-claim: Asks a person to approve", out, re.M), out
    assert re.search(r"^\S+  expense-claim  waiting .*approval$", out, re.M), out
    assert "Approval needed: Approve this expense?" in out, out
    assert re.search(r"^task \S+: completed$", out, re.M), out
    assert re.search(r"artifact \S+:summary: 120 EUR for the train to Lyon$", out, re.M), out
    assert '"approvedBy":"anonymous"' in out, out
    assert re.search(r"#\d+  run\.completed$", out, re.M), out

    # The refusal the page describes: a template naming no input of its node.
    good = os.path.join(wf_dir, "expense-claim.json")
    bad = os.path.join(work, "broken.json")
    open(bad, "w").write(open(good).read().replace("{{purpose}}", "{{reason}}"))
    a2ad = os.path.join(ROOT, "build", "release", "src", "a2ad", "cli", "a2ad")
    refused = subprocess.run([a2ad, "validate", good, bad], capture_output=True, text=True)
    assert refused.returncode == 1, refused
    assert "refused" in refused.stdout and "nodes[0].config.template" in refused.stdout, refused
    assert "{{reason}} names no input of the node" in refused.stdout, refused.stdout
    assert "ok     expense-claim" in refused.stdout, "the good file still loads"
    shutil.rmtree(work, ignore_errors=True)
    print("docs/WORKFLOWS.md: every block ran and said what the page says")


if __name__ == "__main__":
    main()
