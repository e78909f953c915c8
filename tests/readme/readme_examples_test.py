#!/usr/bin/env python3
"""Runs every ```sh example of README.md as written, against the real server.

Usage: readme_examples_test.py <repo root> <a2ad binary> [<a2ad_test_pki binary>]

The only rewrites are where the README names a fixed address: port 8080 (the default) and the
push receiver's 9000 become free loopback ports, `a2ad` is the built binary, and `./data` a
fresh directory. Examples that start servers in the background (`... &`) are run with a wait
for each server to answer before the next line, as a reader typing them would. Every example
must exit 0 and its output must show what the README says it does (checked per example below);
a README example with no check here fails the test, so a new example cannot go untested.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT, BIN = sys.argv[1], sys.argv[2]
PKI = sys.argv[3] if len(sys.argv) > 3 else None  # the a2ad_test_pki binary (tests/support)


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


def wait_port(port, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port} within {timeout} s")


def blocks(readme):
    out, cur, line_no = [], None, 0
    for n, line in enumerate(readme.splitlines(), 1):
        if cur is None and line.strip() == "```sh":
            cur, line_no = [], n
        elif cur is not None and line.strip() == "```":
            out.append((line_no, "\n".join(cur)))
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


class Server:
    """`a2ad serve` on a free port with the repository's workflows."""

    def __init__(self, tmp):
        self.port = free_port()
        self.data = os.path.join(tmp, f"data-{self.port}")
        os.makedirs(self.data)
        self.proc = subprocess.Popen(
            [BIN, "serve", "--listen", f"127.0.0.1:{self.port}", "--data-dir", self.data,
             "--workflows-dir", os.path.join(ROOT, "workflows")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_http(f"http://127.0.0.1:{self.port}/healthz")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def run(script, env=None, timeout=60, cwd=None):
    r = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True,
                       timeout=timeout, env={**os.environ, **(env or {})}, cwd=cwd)
    assert r.returncode == 0, f"exit {r.returncode}\nscript:\n{script}\nstderr:\n{r.stderr}"
    return r.stdout


def rpc(port, method, params):
    body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": method, "params": params}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/a2a", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def sse_data(text):
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def example_make(code, tmp):
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


def example_campaign_brief(code, tmp):
    s = Server(tmp)
    try:
        out = run(code.replace("localhost:8080", f"127.0.0.1:{s.port}"))
        task = json.loads(out)["result"]
        assert task["status"]["state"] == "input-required", out
        # "then answer it": the reply the comment sketches, on the same task.
        answer = rpc(s.port, "message/send", {"message": {
            "kind": "message", "messageId": "m2", "role": "user", "taskId": task["id"],
            "parts": [{"kind": "data", "data": {"action": "accept"}}]}})
        assert "result" in answer, answer
        after = answer["result"]
        assert after["id"] == task["id"], answer
        assert after["status"]["state"] in ("working", "completed", "input-required"), answer
        assert "m2" in [m["messageId"] for m in after.get("history", [])], answer
    finally:
        s.stop()


def example_ticker(code, tmp):
    s = Server(tmp)
    try:
        out = run(code.replace("127.0.0.1:8080", f"127.0.0.1:{s.port}"))
        events = [e["result"] for e in sse_data(out)]
        chunks = [e for e in events if e.get("kind") == "artifact-update"]
        assert len(chunks) == 5, out
        assert events[-1]["status"]["state"] == "completed" and events[-1]["final"], out
    finally:
        s.stop()


def example_push(code, tmp):
    port, hook = free_port(), free_port()
    data = os.path.join(tmp, "push-data")
    os.makedirs(data)
    script = (code.replace("8080", str(port)).replace("9000", str(hook))
              .replace("./data", data))
    script = re.sub(r"(?m)^a2ad ", BIN + " ", script)
    lines, current = [], []
    # One command per logical line (continuations end without '&' and the curl spans lines).
    for line in script.splitlines():
        current.append(line)
        if line.rstrip().endswith("&") or line.rstrip().endswith("'"):
            lines.append("\n".join(current))
            current = []
    if current:
        lines.append("\n".join(current))
    procs = []
    listen_out = os.path.join(tmp, "push-listen.out")
    try:
        for cmd in lines:
            if cmd.rstrip().endswith("&"):
                is_listener = " push listen " in cmd
                procs.append(subprocess.Popen(
                    ["bash", "-c", "exec " + cmd.rstrip()[:-1]],
                    stdout=open(listen_out if is_listener else os.devnull, "w"),
                    stderr=subprocess.DEVNULL, env={**os.environ, "A2AD_LISTEN": f"127.0.0.1:{port}"}))
                wait_port(hook if is_listener else port)
            else:
                out = run(cmd)
                task = json.loads(out)["result"]
                assert task["status"]["state"] == "completed", out
        # The receiver prints each push it verified.
        end = time.time() + 20
        while time.time() < end and task["id"] not in open(listen_out).read():
            time.sleep(0.2)
        got = open(listen_out).read()
        assert task["id"] in got, f"no verified push for {task['id']}:\n{got}"
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=10)


def example_card_signing(code, tmp):
    port = free_port()
    data = os.path.join(tmp, "card-data")
    key = os.path.join(tmp, "card-key.pem")
    script = (code.replace("8080", str(port)).replace("./data", data)
              .replace("card-key.pem", key))
    script = re.sub(r"(?m)^a2ad ", BIN + " ", script)
    lines = script.splitlines()
    bg = next(i for i, line in enumerate(lines) if line.rstrip().endswith("&"))
    run("\n".join(lines[:bg]))  # the key
    proc = subprocess.Popen(["bash", "-c", "exec " + lines[bg].rstrip()[:-1]],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "A2AD_LISTEN": f"127.0.0.1:{port}"})
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz")
        out = run("\n".join(lines[bg + 1:]))
        header_line, jwks_text = out.strip().split("\n", 1)
        header = json.loads(header_line)
        assert header["alg"] == "ES256" and header["typ"] == "JOSE", out
        assert header["jku"] == f"http://127.0.0.1:{port}/.well-known/jwks.json", out
        jwks = json.loads(jwks_text)
        assert header["kid"] in [k["kid"] for k in jwks["keys"]], out
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def example_api_keys(code, tmp):
    port = free_port()
    data = os.path.join(tmp, "keys-data")
    key_file = os.path.join(tmp, "key.txt")
    script = (code.replace("8080", str(port)).replace("./data", data)
              .replace("key.txt", key_file))
    script = re.sub(r"(?m)^a2ad ", BIN + " ", script)
    lines = script.splitlines()
    bg = next(i for i, line in enumerate(lines) if line.rstrip().endswith("&"))
    run("\n".join(lines[:bg]))  # the key
    key = open(key_file).read().strip()
    assert re.fullmatch(r"a2ad_k_[0-9a-f]{16}_[A-Za-z0-9_-]{43}", key), key
    proc = subprocess.Popen(["bash", "-c", "exec " + lines[bg].rstrip()[:-1]],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "A2AD_LISTEN": f"127.0.0.1:{port}"})
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz")
        out = run("\n".join(lines[bg + 1:])).splitlines()
        assert out[0] == "401", out
        assert json.loads(out[1])["tasks"] == [], out
        listed = "\n".join(out[2:])
        assert key[7:23] in listed and "acme" in listed and "active" in listed, listed
        assert key[24:] not in listed, "keys list shows the secret"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def example_rate_limit(code, tmp):
    port = free_port()
    data = os.path.join(tmp, "limit-data")
    key_file = os.path.join(tmp, "limit-key.txt")
    script = (code.replace("8080", str(port)).replace("./data", data)
              .replace("key.txt", key_file))
    script = re.sub(r"(?m)^a2ad ", BIN + " ", script)
    lines = script.splitlines()
    bg = next(i for i, line in enumerate(lines) if line.rstrip().endswith("&"))
    run("\n".join(lines[:bg]))
    proc = subprocess.Popen(["bash", "-c", "exec " + lines[bg].rstrip()[:-1]],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "A2AD_LISTEN": f"127.0.0.1:{port}"})
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz")  # /healthz is not limited
        out = run("\n".join(lines[bg + 1:])).split()
        # The third request comes well within 2 s of the first (the bucket refills at 0.5/s).
        assert out == ["200", "200", "429"], out
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def example_tls(code, tmp):
    # The certificates the example names, made by the test (a2ad_test_pki, the OpenSSL
    # library): a server certificate for localhost, a client CA and a client certificate for
    # CN=billing-agent,O=Acme.
    assert PKI, "readme_examples_test.py needs the a2ad_test_pki binary as its third argument"
    work = os.path.join(tmp, "tls")
    subprocess.run([PKI, work], check=True)
    port = free_port()
    script = code.replace("8080", str(port)).replace("./data", os.path.join(work, "data"))
    script = re.sub(r"(?m)^a2ad ", BIN + " ", script)
    lines = script.splitlines()
    bg = next(i for i, line in enumerate(lines) if line.rstrip().endswith("&"))
    run("cd " + work + "\n" + "\n".join(lines[:bg]))  # clients.json
    proc = subprocess.Popen(["bash", "-c", "cd " + work + " && exec " + lines[bg].rstrip()[:-1]],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "A2AD_LISTEN": f"127.0.0.1:{port}"})
    try:
        wait_port(port)
        out = []
        for _ in range(300):  # the port is open before the server answers: retry until it does
            try:
                out = run("cd " + work + "\n" + "\n".join(lines[bg + 1:])).splitlines()
                break
            except AssertionError:
                time.sleep(0.1)
        assert out and out[0] == "401", out
        assert json.loads(out[1])["tasks"] == [], out
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def example_oidc(code, tmp):
    # Run as one script (its shell variables and function carry from line to line) in a
    # directory of its own; each background server gets a wait until it answers, and every
    # background job is killed when the script ends.
    port, issuer_port = free_port(), free_port()
    work = os.path.join(tmp, "oidc")
    os.makedirs(work)
    script = (code.replace("8080", str(port)).replace("9100", str(issuer_port))
              .replace("./data", os.path.join(work, "data")))
    script = re.sub(r"(?m)^a2ad ", os.path.abspath(BIN) + " ", script)
    lines = []
    for line in script.splitlines():
        if line.rstrip().endswith("&"):
            line = line.rstrip()[:-1] + " >>" + os.path.join(work, "bg.log") + " 2>&1 &"
        lines.append(line)
        if line.endswith("&"):
            probe = (f"http://127.0.0.1:{issuer_port}/jwks.json" if "http.server" in line
                     else f"http://127.0.0.1:{port}/healthz")
            lines.append(f"for i in $(seq 300); do curl -sf -o /dev/null {probe} && break; "
                         "sleep 0.1; done")
    out = run("cd " + work + "\ntrap 'kill $(jobs -p) 2>/dev/null' EXIT\n" + "\n".join(lines),
              env={"A2AD_LISTEN": f"127.0.0.1:{port}"}).splitlines()
    assert out[0] == "401", out
    assert json.loads(out[1])["tasks"] == [], out


def example_quorum(code, tmp):
    # Run where the README's ./data and *.key files may be made: a fresh directory.
    work = os.path.join(tmp, "quorum")
    os.makedirs(work)
    port = free_port()
    script = (code.replace("8080", str(port))
              .replace("./workflows", os.path.join(ROOT, "workflows")))
    script = re.sub(r"(?m)^a2ad ", BIN + " ", script)
    lines = script.splitlines()
    bg = next(i for i, line in enumerate(lines) if line.rstrip().endswith("&"))
    keys = run("\n".join(lines[:bg]), cwd=work)
    assert keys == "", keys  # the keys went to their files
    proc = subprocess.Popen(["bash", "-c", "exec " + lines[bg].rstrip()[:-1]], cwd=work,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "A2AD_LISTEN": f"127.0.0.1:{port}"})
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz")
        out = [json.loads(line) for line in run("\n".join(lines[bg + 1:]), cwd=work).splitlines()]
        assert [o["status"] for o in out] == ["waiting-approval"] * 3 + ["running"], out
        assert [o["quorum"]["accepts"] for o in out[:3]] == [1, 2, 2], out
        assert "quorum" not in out[3], out
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def example_pause(code, tmp):
    s = Server(tmp)
    try:
        out = run(code.replace("localhost:8080", f"127.0.0.1:{s.port}"))
        lines = out.strip().splitlines()
        # The walk prints: the state in metadata, the literal state, the resume's cause, and
        # the event's answer (naming the await-event task it resumed).
        assert lines[:3] == ["paused-by-client", "paused-by-client", "explicit_resume"], out
        event = json.loads(lines[3])
        assert event["name"] == "build.done" and len(event["resumed"]) == 1, out
        resumed = event["resumed"][0]
        end = time.time() + 10
        while time.time() < end:
            task = rpc(s.port, "tasks/get", {"id": resumed})["result"]
            if task["status"]["state"] == "completed":
                break
            time.sleep(0.05)
        assert task["status"]["state"] == "completed", task
        data = [p["data"] for a in task.get("artifacts", []) for p in a["parts"] if "data" in p]
        assert {"event": {"ok": True}, "cause": "external_event"} in data, task
    finally:
        s.stop()


def example_opt(code, tmp):
    s = Server(tmp)
    try:
        out = run(code.replace("localhost:8080", f"127.0.0.1:{s.port}"))
        # The plan's status at creation, the objective at the gate, the approved task, the
        # stream's last event.
        assert out.strip().splitlines() == ["blocked", "blocked", "completed",
                                            "objective completed"], out
    finally:
        s.stop()


def example_operations(code, tmp):
    port = free_port()
    data = os.path.join(tmp, "ops-data")
    lines = code.replace("8080", str(port)).replace("./data", data).splitlines()
    assert lines[0].startswith("a2ad serve") and lines[0].endswith("&"), code
    proc = subprocess.Popen(
        [BIN, *lines[0][len("a2ad "):-1].split(), "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz")
        out = run("\n".join(lines[1:])).splitlines()
        assert json.loads(out[0])["ready"] is True, out
        states = {re.match(r'a2ad_tasks\{state="([a-z-]+)"\} 0$', l).group(1) for l in out[1:]}
        assert {"completed", "working", "input-required", "failed"} <= states, out
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def example_backup(code, tmp):
    port = free_port()
    data, backup = os.path.join(tmp, "bk-data"), os.path.join(tmp, "bk-copy")
    lines = code.replace("./data", data).replace("./backup", backup).splitlines()
    assert lines[0].startswith("a2ad serve") and lines[0].endswith("&"), code
    proc = subprocess.Popen(
        [BIN, *lines[0][len("a2ad "):-1].split(), "--listen", f"127.0.0.1:{port}",
         "--workflows-dir", os.path.join(ROOT, "workflows")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz")
        task = rpc(port, "message/send", {"message": {
            "kind": "message", "role": "user", "messageId": "bk1",
            "parts": [{"kind": "text", "text": "keep me"}], "metadata": {"skillId": "echo"}}})
        task_id = task["result"]["id"]
        out = run("\n".join(re.sub(r"^a2ad ", BIN + " ", l) for l in lines[1:]))
        assert out.startswith(f"a2ad backup: {backup}: 1 task(s), schema version"), out
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    # Serving the copy restores the task.
    port = free_port()
    proc = subprocess.Popen([BIN, "serve", "--data-dir", backup, "--listen", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz")
        got = rpc(port, "tasks/get", {"id": task_id})
        assert got["result"]["status"]["state"] == "completed", got
    finally:
        proc.terminate()
        proc.wait(timeout=10)


CHECKS = [
    ("a2ad backup", example_backup),
    ("/metrics", example_operations),
    ("objectives/create", example_opt),
    ("tasks/pause", example_pause),
    ("conformance-interrupt-quorum", example_quorum),
    ("--rate-limit", example_rate_limit),
    ("make run", example_make),
    ("--card-signing-key", example_card_signing),
    ('"skillId":"campaign-brief"', example_campaign_brief),
    ('"skillId":"ticker"', example_ticker),
    ("push listen", example_push),
    ("--oidc-issuer", example_oidc),
    ("keys create", example_api_keys),
    ("--tls-client-map", example_tls),
]


def main():
    readme = open(os.path.join(ROOT, "README.md")).read()
    found = blocks(readme)
    assert found, "README.md has no ```sh examples"
    failures = 0
    tmp = tempfile.mkdtemp(prefix="a2ad-readme-")
    try:
        for line_no, code in found:
            check = next((f for key, f in CHECKS if key in code), None)
            name = f"README.md:{line_no}"
            if check is None:
                print(f"FAIL {name}: an example with no check in {__file__}")
                failures += 1
                continue
            try:
                check(code, tmp)
                print(f"ok   {name} ({check.__name__})")
            except Exception as e:  # report every example, then fail
                print(f"FAIL {name} ({check.__name__}): {e}")
                failures += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
