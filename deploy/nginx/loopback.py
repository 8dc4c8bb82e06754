"""N <name>-server replicas behind nginx on this machine's loopback, in a
temporary folder: what the replica test (tests/server/nginx_replicas_test.py)
and the benchmark (scripts/nginx_bench.py) run. Standard library only.

    with Loopback(server_program, replicas=2, server_args=["-np", "4"]) as lb:
        chat(lb.nginx_port, [{"role": "user", "content": "Hi"}], session="s1")

Every process it starts is killed when the `with` block ends.
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

RENDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "render.sh")


def nginx_program():
    """nginx's path, or None. Debian puts it in /usr/sbin, which is not on an
    ordinary user's PATH."""
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")


def free_port():
    # Another process may take it before nginx does; start() then says so.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"gave up after {seconds} s waiting for {what}")
        time.sleep(0.05)


@dataclass
class Reply:
    status: int  # 0: no HTTP answer (connection closed or timed out)
    body: dict = field(default_factory=dict)
    error: str = ""
    sent_at: float = 0.0  # time.monotonic() just before the request was sent
    done_at: float = 0.0


def post(port, path, body, headers=None, timeout=30):
    """POSTs JSON to 127.0.0.1:port and waits at most `timeout` seconds for
    each step of the answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    reply = Reply(0, sent_at=time.monotonic())
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        reply.status = resp.status
        text = resp.read().decode(errors="replace")
        try:
            reply.body = json.loads(text)
        except json.JSONDecodeError:
            reply.error = text[:200]
    except OSError as e:  # refused, reset, timed out
        reply.error = f"{type(e).__name__}: {e}"
    finally:
        conn.close()
        reply.done_at = time.monotonic()
    return reply


def chat(port, messages, session=None, max_tokens=16, timeout=30):
    """A greedy chat completion; with `session`, sent with X-Session-Id."""
    headers = {"X-Session-Id": session} if session else {}
    return post(port, "/v1/chat/completions",
                {"messages": messages, "max_tokens": max_tokens, "temperature": 0}, headers, timeout)


class Conversation:
    """A chat whose every turn resends the turns before it; with `session`,
    each turn carries X-Session-Id: name."""

    def __init__(self, name, session=True):
        self.name = name
        self.session = name if session else None
        self.messages = []
        self.replies = []  # (turn, Reply) in the order sent

    def turn(self, port, n, max_tokens):
        messages = self.messages + [{"role": "user", "content": f"Tell me the story of {self.name}, part {n}."}]
        reply = chat(port, messages, self.session, max_tokens)
        self.replies.append((n, reply))
        if reply.status == 200:
            self.messages = messages + [reply.body["choices"][0]["message"]]
        return reply


class Replica:
    """One <name>-server on a free loopback port (--port 0; the port is read
    from its first line on stderr)."""

    def __init__(self, program, args, log_path):
        self.log_path = log_path
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen([program, "--port", "0", "-t", "1", *args],
                                            stdout=subprocess.DEVNULL, stderr=log)
        self.port = None
        wait_until(self._listening, 60, f"{program} to listen (see {log_path})")

    def _listening(self):
        if self.process.poll() is not None:
            raise RuntimeError(f"the server exited: {self.log()}")
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", self.log())
        self.port = m and int(m.group(1))
        return self.port is not None

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def health(self):
        """GET /health straight from this replica, not through nginx: its
        slots_processing and requests_waiting."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", "/health")
            return json.loads(conn.getresponse().read())
        finally:
            conn.close()


class Loopback:
    """`replicas` servers and nginx in front of them, configured by render.sh."""

    def __init__(self, program, replicas=2, server_args=(), per_client=64):
        self.program = program
        self.count = replicas
        self.server_args = list(server_args)
        self.per_client = per_client
        self.replicas = []
        self.nginx = None

    def __enter__(self):
        self._folder = tempfile.TemporaryDirectory(prefix="kiln-nginx-")
        self.folder = self._folder.name
        # Started as root, nginx's workers run as `nobody`, which must reach
        # the temp folders in here.
        os.chmod(self.folder, 0o755)
        try:
            for i in range(self.count):
                self.replicas.append(Replica(self.program, self.server_args, os.path.join(self.folder, f"replica{i}.log")))
            self._start_nginx()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start_nginx(self):
        program = nginx_program()
        if program is None:
            raise RuntimeError("nginx is not installed")
        self.nginx_port = free_port()
        conf = os.path.join(self.folder, "nginx.conf")
        with open(conf, "w") as f:
            subprocess.run([RENDER, "--listen", f"127.0.0.1:{self.nginx_port}", "--per-client", str(self.per_client),
                            *[r.address for r in self.replicas]], stdout=f, check=True)
        with open(os.path.join(self.folder, "nginx.stderr"), "wb") as err:
            # In a process group of its own, so that its workers can be killed
            # with it if it does not stop.
            self.nginx = subprocess.Popen([program, "-p", self.folder, "-c", conf, "-g", "daemon off;"],
                                          stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)

        def accepting():
            if self.nginx.poll() is not None:
                raise RuntimeError(f"nginx exited: {self.file('nginx.stderr')}{self.file('error.log')}")
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.nginx_port)) == 0

        wait_until(accepting, 10, "nginx to listen")

    def file(self, name):
        path = os.path.join(self.folder, name)
        if not os.path.exists(path):
            return ""
        with open(path, errors="replace") as f:
            return f.read()

    def kill(self, replica):
        """SIGKILL: the replica dies with its requests in flight."""
        replica.process.send_signal(signal.SIGKILL)
        replica.process.wait(timeout=10)

    def __exit__(self, *exc):
        if self.nginx is not None and self.nginx.poll() is None:
            self.nginx.terminate()  # nginx's fast shutdown: the workers end with it
            try:
                self.nginx.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.nginx.pid, signal.SIGKILL)
                self.nginx.wait()
        for r in self.replicas:
            if r.process.poll() is None:
                r.process.terminate()
                try:
                    r.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    r.process.kill()
                    r.process.wait()
        self._folder.cleanup()
        return False
