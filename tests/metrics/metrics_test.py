#!/usr/bin/env python3
"""GET /metrics of a real server, read by the Prometheus client's own parser.

Usage: metrics_test.py <a2ad binary>

Starts a2ad on a free loopback port with a fresh data directory and a push receiver, does
known work (echo runs, one with a push notification, a call that fails, a path no route
serves, a stream), then checks that the exposition parses as Prometheus text and that the
numbers are the work done: requests by operation and status, tasks by state, the push
delivered, the store's batches, the streams open. Then with API keys: /metrics needs one.
"""
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:  # a Python other than Debian's (pyenv): Debian's package is still there
    sys.path.append("/usr/lib/python3/dist-packages")
    from prometheus_client.parser import text_string_to_metric_families

BIN = sys.argv[1]
WORKFLOWS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workflows")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, *extra, data_dir=None):
        self.dir = tempfile.mkdtemp(prefix="a2ad-metrics-")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join(self.dir, "log"), "w")
        self.proc = subprocess.Popen(
            [BIN, "serve", "--listen", f"127.0.0.1:{self.port}", "--data-dir",
             data_dir or os.path.join(self.dir, "data"), "--default-skill", "echo",
             "--workflows-dir", WORKFLOWS, *extra],
            stdout=self.log, stderr=subprocess.STDOUT)
        end = time.time() + 30
        while time.time() < end:
            try:
                urllib.request.urlopen(self.base + "/healthz", timeout=2).read()
                return
            except Exception:
                assert self.proc.poll() is None, self.dump()
                time.sleep(0.05)
        raise AssertionError("the server did not answer /healthz\n" + self.dump())

    def dump(self):
        self.log.flush()
        with open(os.path.join(self.dir, "log")) as f:
            return f.read()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def request(self, path, body=None, headers=None, method=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"content-type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def rpc(self, method, params, headers=None):
        status, text = self.request("/v1/a2a", {"jsonrpc": "2.0", "id": 1, "method": method,
                                                "params": params}, headers)
        assert status == 200, (status, text)
        return json.loads(text)

    def scrape(self, headers=None):
        status, text = self.request("/metrics", headers=headers)
        assert status == 200, (status, text)
        samples = {}
        types = {}
        for family in text_string_to_metric_families(text):
            types[family.name] = family.type
            for s in family.samples:
                samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
        return samples, types, text


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))))


def message(text, push_url=None):
    params = {"message": {"kind": "message", "role": "user", "messageId": os.urandom(8).hex(),
                          "parts": [{"kind": "text", "text": text}]}}
    if push_url:
        params["configuration"] = {"pushNotificationConfig": {"url": push_url}}
    return params


def push_receiver():
    got = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            got.append(self.rfile.read(int(self.headers.get("content-length", 0))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, got


def wait_for(predicate, what, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def test_the_numbers_are_the_work_done():
    httpd, pushes = push_receiver()
    server = Server("--egress-allow-http", "--egress-allowlist", "127.0.0.1/32",
                    "--conformance-fixtures")
    try:
        samples, types, text = server.scrape()
        # Before any work: the families are there, at zero.
        assert types["a2ad_http_requests"] == "counter", types
        assert types["a2ad_http_request_duration_seconds"] == "histogram"
        assert types["a2ad_tasks"] == "gauge"
        assert value(samples, "a2ad_tasks", state="completed") == 0
        assert value(samples, "a2ad_push_attempts_total", outcome="delivered") == 0
        assert value(samples, "a2ad_streams_open") == 0
        info = [k for k in samples if k[0] == "a2ad_build_info"]
        assert len(info) == 1 and samples[info[0]] == 1 and dict(info[0][1])["version"], info

        for i in range(5):
            assert server.rpc("message/send", message(f"hi {i}"))["result"]["status"]["state"] == \
                "completed"
        push_url = f"http://127.0.0.1:{httpd.server_address[1]}/hook"
        assert "result" in server.rpc("message/send", message("pushed", push_url))
        bad = server.rpc("tasks/get", {"id": "no-such-task"})
        assert bad["error"]["code"] == -32001, bad
        for path in ("/nothing/here/1", "/nothing/here/2", "/x"):
            assert server.request(path)[0] == 404

        wait_for(lambda: value(server.scrape()[0], "a2ad_push_attempts_total",
                               outcome="delivered") == 1, "the push to be delivered")
        # The attempt counts when it is made; the outbox row is written after (batched).
        wait_for(lambda: value(server.scrape()[0], "a2ad_push_outbox", state="pending") == 0,
                 "the delivered push to leave the outbox")
        assert len(pushes) >= 1

        samples, _, text = server.scrape()
        assert value(samples, "a2ad_http_requests_total", operation="message/send",
                     status="200") == 6, text
        assert value(samples, "a2ad_http_requests_total", operation="tasks/get",
                     status="200") == 1, text
        assert value(samples, "a2ad_http_requests_total", operation="unmatched",
                     status="404") == 3, text
        assert value(samples, "a2ad_http_request_duration_seconds_count",
                     operation="message/send") == 6
        assert value(samples, "a2ad_http_request_duration_seconds_bucket",
                     operation="message/send", le="+Inf") == 6
        assert value(samples, "a2ad_tasks", state="completed") == 6, text
        assert value(samples, "a2ad_tasks", state="working") == 0
        assert value(samples, "a2ad_task_events") > 0
        assert value(samples, "a2ad_push_outbox", state="pending") == 0
        assert value(samples, "a2ad_store_batch_commits_count") >= 1
        assert value(samples, "a2ad_store_batch_commits_sum") >= 6
        # Neither the probe nor the scrape counts itself.
        assert not any(dict(k[1]).get("operation") in ("/metrics", "/healthz")
                       for k in samples if k[0] == "a2ad_http_requests_total"), text

        # A stream held open shows in the gauge, and leaves it when it ends: a run waiting at
        # an approval gate, followed by tasks/resubscribe.
        gate = server.rpc("message/send", {"message": {
            **message("wait")["message"], "metadata": {"skillId": "conformance-approval"}}})
        assert gate["result"]["status"]["state"] == "input-required", gate
        assert value(server.scrape()[0], "a2ad_tasks", state="input-required") == 1
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tasks/resubscribe",
                           "params": {"id": gate["result"]["id"]}})
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(("POST /v1/a2a HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                      f"content-length: {len(body)}\r\n\r\n{body}").encode())
        assert b"text/event-stream" in sock.recv(4096)
        wait_for(lambda: value(server.scrape()[0], "a2ad_streams_open") == 1,
                 "the stream to be counted")
        sock.close()
        wait_for(lambda: value(server.scrape()[0], "a2ad_streams_open") == 0,
                 "the closed stream to be uncounted")
    finally:
        server.stop()
        httpd.shutdown()


def test_with_api_keys_the_metrics_need_one():
    data = tempfile.mkdtemp(prefix="a2ad-metrics-keys-")
    try:
        key = subprocess.run([BIN, "keys", "create", "--data-dir", data, "--tenant", "ops",
                              "--scopes", "tasks:read", "--name", "scraper"],
                             check=True, capture_output=True, text=True).stdout.strip()
        server = Server(data_dir=data)
        try:
            status, text = server.request("/metrics")
            assert status == 401, (status, text)
            samples, _, text = server.scrape({"authorization": f"Bearer {key}"})
            assert value(samples, "a2ad_build_info", version=dict(
                [k for k in samples if k[0] == "a2ad_build_info"][0][1])["version"]) == 1
            # A refused request still counts (by its route's family), the scrapes never.
            assert value(samples, "a2ad_http_requests_total", operation="/metrics",
                         status="401") is None, text
        finally:
            server.stop()
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    for name, fn in list(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
            print("ok", name)
