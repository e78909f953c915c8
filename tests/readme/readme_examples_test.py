#!/usr/bin/env python3
"""Runs the ```sh examples of README.md as a reader pastes them: in order, in one shell.

Usage: readme_examples_test.py <repo root> <a2ad binary>

"Two commands" (`make run` serves until stopped) is run on its own, on a free port. Every other
block goes, in the README's order, into one bash script run from the repository root, so that
what a section leaves behind (its PATH, a stopped server, a busy port) meets the next one as
it would meet the reader. The only rewrite: the README's fixed ports (8080-8089, 9000) become
free loopback ports. Each block's output must show what the README says it does (CHECKS,
keyed by the section's heading); a block with no check fails the test, so a new example
cannot go untested.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT, BIN = sys.argv[1], sys.argv[2]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, timeout=30, proc=None):
    end = time.time() + timeout
    while time.time() < end:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the server exited ({proc.returncode}) before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status < 500:
                    return
        except Exception:
            time.sleep(0.1)
    raise AssertionError(f"nothing answered at {url} within {timeout} s")


def sections(readme):
    """[(heading, code)] of every ```sh block, with the heading it is under."""
    out, cur, heading = [], None, ""
    for line in readme.splitlines():
        if cur is None and line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif cur is None and line.strip() == "```sh":
            cur = []
        elif cur is not None and line.strip() == "```":
            out.append((heading, "\n".join(cur)))
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def lines(out):
    return [line for line in out.splitlines() if line.strip()]


def check_quickstart(out):
    assert re.search(r"^task \S+: input-required$", out, re.M), out
    assert "Approval needed" in out, out
    assert re.search(r"^task \S+: completed$", out, re.M), out
    assert '"decision":"accept"' in out, "the published brief"


def check_curl(out):
    assert lines(out)[-1] == "TASK_STATE_COMPLETED", out


def check_stream(out):
    assert lines(out)[-1] == "completed True", out


def check_push(out):
    assert re.search(r": completed$", out, re.M), out
    assert lines(out)[-1] == "1", out


def check_keys(out):
    got = lines(out)
    assert "401" in got, out
    assert re.search(r"^\S+  campaign-brief  waiting \d+s  approval$", out, re.M), out
    assert "answer: accept, reject, refine, edit-accept, ask" in out, out
    assert re.search(r"^task \S+: completed$", out, re.M), out
    assert re.search(r"^[0-9a-f]{16}  active    acme .* requester ", out, re.M), out
    assert "a2ad_k_" not in out, "keys list shows no secret"


def check_pause(out):
    got = lines(out)
    assert re.fullmatch(r"task \S+: paused-by-client", got[-4]), out
    assert re.fullmatch(r"\S+  paused-by-client  long-delay  \d+s", got[-3]), out
    assert re.fullmatch(r"task \S+: working", got[-2]), out
    assert re.fullmatch(r"task \S+: canceled", got[-1]), out


def check_opt(out):
    got = lines(out)
    assert got.count("blocked") == 2, out
    assert re.search(r"^task \S+: completed$", out, re.M), out
    assert got[-1] == "objective completed", out


def check_quorum(out):
    answers = [json.loads(line) for line in lines(out) if line.startswith("{")]
    assert [a["status"] for a in answers] == ["waiting-approval"] * 3 + ["running"], out
    assert [a["quorum"]["accepts"] for a in answers[:3]] == [1, 2, 2], out


def check_card(out):
    assert "card: signed, signature verified" in out, out
    header = json.loads(lines(out)[-1])
    assert header["alg"] == "ES256" and header["typ"] == "JOSE" and header["kid"], out
    assert header["jku"].endswith("/.well-known/jwks.json"), out


def check_operations(out):
    got = lines(out)
    ready = next(json.loads(line) for line in got if line.startswith('{"ready"'))
    assert ready["ready"] is True, out
    assert 'a2ad_tasks{state="completed"} 1' in got, out
    assert re.search(r"^a2ad backup: .*: 1 task\(s\)", out, re.M), out


def check_console(out):
    got = lines(out)
    assert "1 waiting-approval" in got, out
    assert any(l.lower().startswith("content-security-policy: default-src 'none'") for l in got), out


def check_postgres(out):
    assert "3|1" in lines(out), out


def check_replicas(out):
    done = [l for l in lines(out) if l.startswith("task ") and l.endswith(": completed")]
    assert len(done) == 3 and len(set(done)) == 1, out


CHECKS = {
    "Quickstart": check_quickstart,
    "Speak A2A JSON-RPC with curl": check_curl,
    "Follow a task with a stream, drop it, resume with nothing missed": check_stream,
    "Push notifications to a webhook": check_push,
    "API keys, tenants, and an approver's inbox": check_keys,
    "Pause and resume a task": check_pause,
    "Objectives, plans and tasks": check_opt,
    "Approvals that need several people": check_quorum,
    "Check the agent card's signature": check_card,
    "Health, metrics and backups": check_operations,
    "Watch and act in the operator console": check_console,
    "Serve from PostgreSQL": check_postgres,
    "Several replicas behind a load balancer": check_replicas,
}


def run_make(code, tmp):
    # `make run` serves on embedded defaults; LISTEN and DATA_DIR move it off 8080 and ./data.
    # (`make test` is what CI runs: this test is part of it.)
    assert "make run" in code and "make test" in code, code
    port = free_port()
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "-C", ROOT, "run", f"LISTEN=127.0.0.1:{port}",
         f"DATA_DIR={os.path.join(tmp, 'make-run-data')}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/.well-known/agent-card.json", timeout=600, proc=proc)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/.well-known/agent-card.json") as r:
            card = json.loads(r.read())
        skills = {s["id"] for s in card["skills"]}
        assert {"echo", "campaign-brief"} <= skills, skills
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:  # make exited already (its failure is the assertion above)
            pass
        proc.wait(timeout=30)


def main():
    readme = open(os.path.join(ROOT, "README.md")).read()
    blocks = sections(readme)
    assert blocks, "README.md has no ```sh block"
    ports = {p: free_port() for p in list(range(8080, 8090)) + [9000]}
    script = ["set -euo pipefail"]
    expected = []
    with tempfile.TemporaryDirectory() as tmp:
        for heading, code in blocks:
            if code.lstrip().startswith("make run"):
                run_make(code, tmp)
                continue
            assert heading in CHECKS, f"README block under '{heading}' has no check in {__file__}"
            for fixed, free in ports.items():
                code = re.sub(rf"(127\.0\.0\.1|localhost):{fixed}\b", rf"\g<1>:{free}", code)
            script.append(f"echo '@@@ {len(expected)}'")  # the heading's index (quotes inside)
            script.append(code)
            expected.append(heading)
        # Output into files (a server left running would hold a pipe open). The servers it
        # starts are killed by the script itself; a leftover one is a failure of the README,
        # not of the next test: the process group is killed after.
        out_path, err_path = os.path.join(tmp, "readme.out"), os.path.join(tmp, "readme.err")
        with open(out_path, "w") as out_file, open(err_path, "w") as err_file:
            proc = subprocess.Popen(["bash", "-c", "\n".join(script)], cwd=ROOT,
                                    stdout=out_file, stderr=err_file, start_new_session=True,
                                    env={**os.environ, "TMPDIR": tmp, "A2AD_DEFAULT_SKILL": ""})
            try:
                proc.wait(timeout=540)
            finally:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        out, err = open(out_path).read(), open(err_path).read()
        parts = re.split(r"^@@@ (\d+)$", out, flags=re.M)
        ran = {expected[int(i)]: text for i, text in zip(parts[1::2], parts[2::2])}
        assert proc.returncode == 0, (
            f"the README's examples stopped (exit {proc.returncode}) in "
            f"'{list(ran)[-1] if ran else '(before the first)'}'\nstdout:\n{out[-4000:]}\n"
            f"stderr:\n{err[-4000:]}")
        for heading in expected:
            assert heading in ran, f"'{heading}' did not run\n{out[-4000:]}"
            try:
                CHECKS[heading](ran[heading])
            except AssertionError as e:
                raise AssertionError(f"README section '{heading}': {e}") from None
    print(f"ok: {len(expected)} README sections ran in one shell, in order")


if __name__ == "__main__":
    main()
