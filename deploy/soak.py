#!/usr/bin/env python3
"""`make soak`: a day's traffic in minutes on two `imago serve` nodes behind deploy/nginx.conf.

Clients send a mix through nginx: repeats (hits), new variants with imgproxy's options (misses),
signed URLs, unsigned and badly signed ones, sources that are slow, stall, reset mid-body or are
missing, the hostile files of Tests/Hostile, and clients that hang up mid-response. Part way, node 2
is killed with SIGKILL while it writes its disk cache, and started again on the same cache.

Checked and printed: answers by status; p50/p99; each node's RSS every 2 s (peak, final, and node 1's
last minute against its second); open file descriptors at start and end; no 5xx but 502/503/504;
every 200 decodable (Pillow), a sanitised SVG, or the source's own bytes (raw, skip_processing); node 2's cache after the restart: every index row's
payload present at its size, the killed process's temporary files swept, and the variants it had
answered before the kill answered again, whole, straight from it. RSS: the kept variants grow to
--memory-bytes first, so growth is measured from when they reach 90% of it. Decoded images in flight
are blocks glibc maps apart (a 12 MP source is 48 MB) and unmaps when freed; a one-minute window
swings by tens of MB with how many happen to be in flight. So the check is on the resident set less
those blocks (VmRSS less glibc's `mapped`, read together each second), the last two minutes against
the first two after warm-up; the raw RSS minutes are printed beside it.

Usage: soak.py IMAGO_BINARY [JSON_OUT]   (Python with Pillow: the bench venv)
Environment: SOAK_SECONDS (600), SOAK_CLIENTS (8), SOAK_MEMORY_BYTES (16777216: small enough that
the nodes' kept variants reach it in the first minutes; growth is measured from then on),
SOAK_HEAPTRACK (set: node 1 runs under Debian's heaptrack, its file in the kept work folder),
SOAK_CGROUP_MB (set: each node runs in a memory cgroup of that many MB, v1 or v2, which it sizes
itself from; the kernel's OOM kills in each are counted and must be none; needs root).
Each minute it also records each node's memory as the node reports it (/metrics: what is kept by
part, glibc's heap, the resident set by kind) and as the kernel does (smaps_rollup).
"""

import base64
import hashlib
import hmac
import http.client
import io
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import local_nginx  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus")
SECONDS = int(os.environ.get("SOAK_SECONDS", "600"))
CLIENTS = int(os.environ.get("SOAK_CLIENTS", "8"))
MEMORY_BYTES = int(os.environ.get("SOAK_MEMORY_BYTES", str(16 << 20)))
CGROUP_MB = int(os.environ.get("SOAK_CGROUP_MB", "0"))


class MemoryGroup:
    """A memory cgroup of `megabytes` for one node: v1's memory hierarchy, else v2's."""

    def __init__(self, name, megabytes):
        if os.path.isfile("/sys/fs/cgroup/memory/memory.limit_in_bytes"):
            self.version, self.path = 1, f"/sys/fs/cgroup/memory/{name}"
            os.makedirs(self.path)
            with open(self.path + "/memory.limit_in_bytes", "w") as file:
                file.write(str(megabytes << 20))
        else:
            self.version, self.path = 2, f"/sys/fs/cgroup/{name}"
            os.makedirs(self.path)
            with open(self.path + "/memory.max", "w") as file:
                file.write(str(megabytes << 20))

    def join(self):
        """Run in the child before exec: it starts inside the group."""
        with open(self.path + "/cgroup.procs", "w") as file:
            file.write(str(os.getpid()))

    def oom_kills(self):
        with open(self.path + ("/memory.oom_control" if self.version == 1 else "/memory.events")) as file:
            return next((int(line.split()[1]) for line in file if line.startswith("oom_kill ")), -1)

    def peak_mb(self):
        try:
            with open(self.path + ("/memory.max_usage_in_bytes" if self.version == 1 else "/memory.peak")) as file:
                return int(file.read()) >> 20
        except OSError:
            return None

    def remove(self):
        try:
            os.rmdir(self.path)
        except OSError:
            pass
KEY, SALT = os.urandom(32), os.urandom(16)
WALLPAPERS = ["2004default.jpg", "firstgeneration.jpg", "rhythm.jpg", "calla.png", "city.png"]
CORPUS_FILES = [
    "jpeg/video-001.jpeg", "jpeg/video-001.progressive.jpeg", "png/basn2c08.png", "png/basn6a08.png",
    "webp/blue-purple-pink-large.lossless.webp", "gif/video-001.gif", "gif/triangle-001.gif",
]
SVG = b"""<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><rect width="400" height="300" fill="#3a6"/>
<circle cx="200" cy="150" r="100" fill="#fc3" onclick="alert(1)"/><script>alert(1)</script></svg>"""
EXPECTED_5XX = {502, 503, 504}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ----- The origin: good sources, and sources that misbehave -----

class Origin(BaseHTTPRequestHandler):
    files = {}
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        kind, _, name = self.path.lstrip("/").partition("/")
        body = self.files.get(name.split("?")[0])
        if kind == "missing" or body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=3600")
        self.end_headers()
        try:
            if kind == "slow":  # the whole body over about 1.5 s
                for i in range(0, len(body), max(1, len(body) // 15)):
                    self.wfile.write(body[i:i + max(1, len(body) // 15)])
                    self.wfile.flush()
                    time.sleep(0.1)
            elif kind == "stall":  # half, then nothing until the node gives up
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                time.sleep(12)
            elif kind == "reset":  # half, then a TCP reset
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                self.connection.close()
                self.close_connection = True
            else:
                self.wfile.write(body)
        except OSError:
            self.close_connection = True


def load_sources():
    files = {}
    for name in WALLPAPERS:
        path = "/usr/share/backgrounds/" + name
        if os.path.exists(path):
            files[name] = open(path, "rb").read()
    for name in CORPUS_FILES:
        path = os.path.join(CORPUS, name)
        if os.path.exists(path):
            files[os.path.basename(name)] = open(path, "rb").read()
    files["drawing.svg"] = SVG
    hostile = {}
    folder = os.path.join(ROOT, "Tests", "Hostile")
    for name in sorted(os.listdir(folder)):
        if name.endswith((".md", ".py", ".txt")):
            continue
        hostile[name] = open(os.path.join(folder, name), "rb").read()
    files.update(hostile)
    return files, [n for n in files if n not in hostile and n != "drawing.svg"], sorted(hostile)


# ----- URLs -----

def signed(path):
    digest = hmac.new(KEY, SALT + path.encode(), hashlib.sha256).digest()
    return "/" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode() + path


OPTIONS = [
    "rs:fit:300:200", "rs:fill:200:200:1", "rs:fill-down:400:300", "rs:force:120:80", "rs:auto:300:300:0:1",
    "s:240:160", "w:256", "h:180", "mw:300", "mh:300", "z:0.5", "dpr:2", "el:1", "ex:1:so", "exar:1:ce",
    "c:0.5:0.5", "c:300:200:nowe", "t:10", "t:10:FF00FF:1:1", "pd:10:20", "ar:0", "rot:90", "rot:270", "fl:1:0",
    "fl:0:1", "bg:255:0:0", "bg:ff8800", "g:sm", "g:fp:0.3:0.7", "g:nowe:10:10", "sh:1.5", "pix:8", "bl:3",
    "wm:0.5:soea:10:10:0.2", "wm:0.3:re", "q:60", "fq:jpeg:70", "mb:20000", "f:webp", "f:png", "f:jpg",
    "fn:soak", "att:1", "msr:60", "msfs:50000000", "maf:100", "mafr:60", "mrd:512", "pr:thumb", "sm:0",
    "scp:0", "kcr:1", "eth:1", "skp:gif", "raw:1",
]


def variant_path(rng, source, origin, options=None):
    if options is None:
        options = [rng.choice(["rs:fit:%d:%d" % (rng.randint(40, 600), rng.randint(40, 600)), "w:%d" % rng.randint(40, 600)])]
        options += rng.sample(OPTIONS, rng.randint(0, 3))
        options.append("cb:%d" % rng.randint(0, 1 << 30))
    encoded = base64.urlsafe_b64encode(f"http://127.0.0.1:{origin}/{source}".encode()).rstrip(b"=").decode()
    return "/" + "/".join(options) + "/" + encoded


# ----- Clients -----

class Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.statuses = {}
        self.by_kind = {}
        self.latencies = []
        self.undecodable = []
        self.unexpected = []
        self.answered_ok = []  # (path, accept, etag) answered 200 through nginx

    def record(self, kind, status, seconds, path=None, accept=None, etag=None, body_ok=True):
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1
            self.by_kind.setdefault(kind, {}).setdefault(status, 0)
            self.by_kind[kind][status] += 1
            self.latencies.append(seconds)
            if not body_ok:
                self.undecodable.append((kind, path))
            if status >= 500 and status not in EXPECTED_5XX:
                self.unexpected.append((kind, status, path))
            if status == 200 and path and kind in ("miss", "hit"):
                self.answered_ok.append((path, accept, etag))


def decodable(body, content_type):
    if content_type == "image/svg+xml":
        return body.lstrip().startswith((b"<svg", b"<?xml")) and b"<script" not in body
    try:
        with Image.open(io.BytesIO(body)) as image:
            image.load()
        return True
    except Exception:
        return False


def get(port, path, accept="*/*"):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", path, headers={"Accept": accept})
        response = connection.getresponse()
        return response.status, dict((k.lower(), v) for k, v in response.getheaders()), response.read()
    finally:
        connection.close()


def hang_up(port, path, read_bytes):
    """Sends a request and closes the connection after `read_bytes` of the answer (0: at once)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: soak\r\nAccept: image/webp\r\n\r\n".encode())
        if read_bytes:
            s.recv(read_bytes)


def client(number, stop, recorder, front, origin, sources, hostile, popular):
    rng = random.Random(number)
    while not stop.is_set():
        roll = rng.random()
        accept = rng.choice(["*/*", "image/webp,*/*", "image/avif,image/webp,*/*"])
        name = rng.choice(sources)
        if roll < 0.35:
            kind, path, name = "hit", rng.choice(popular), None
            accept = "*/*"
        elif roll < 0.75:
            kind, path = "miss", signed(variant_path(rng, "ok/" + name, origin))
        elif roll < 0.79:
            kind, path = "unsigned", "/insecure" + variant_path(rng, "ok/" + name, origin)
        elif roll < 0.81:
            kind, path = "bad-signature", "/AAAA" + signed(variant_path(rng, "ok/" + name, origin))[5:]
        elif roll < 0.85:
            kind, path = "slow", signed(variant_path(rng, "slow/" + name, origin))
        elif roll < 0.86:
            kind, path = "stall", signed(variant_path(rng, "stall/" + name, origin))
        elif roll < 0.89:
            kind, path = "reset", signed(variant_path(rng, "reset/" + name, origin))
        elif roll < 0.91:
            kind, path = "missing", signed(variant_path(rng, "missing/" + name, origin))
        elif roll < 0.95:
            name = rng.choice(hostile)
            kind, path = "hostile", signed(variant_path(rng, "ok/" + name, origin))
        else:
            kind, path = "hang-up", signed(variant_path(rng, "ok/" + name, origin))
        start = time.time()
        try:
            if kind == "hang-up":
                hang_up(front, path, rng.choice([0, 100]))
                recorder.record(kind, 0, time.time() - start)
                continue
            status, headers, body = get(front, path, accept)
        except OSError as error:
            recorder.record(kind, -1, time.time() - start, path)
            print(f"client {number}: {kind} {error}", file=sys.stderr)
            continue
        # raw and skip_processing give the source's bytes as they came, whatever they are.
        passed_through = name is not None and body == Origin.files.get(name)
        ok = status != 200 or passed_through or decodable(body, headers.get("content-type", ""))
        recorder.record(kind, status, time.time() - start, path, accept, headers.get("etag"), ok)


# ----- Nodes -----

class Node:
    def __init__(self, binary, work, number, origin_root):
        self.binary, self.number = binary, number
        self.folder = f"{work}/node{number}"
        os.makedirs(self.folder, exist_ok=True)
        self.port = free_port()
        self.cache = f"{self.folder}/cache"
        self.origin_root = origin_root
        self.process = None
        self.samples = []  # (seconds since start of load, rss bytes)
        self.settled_samples = []  # (seconds since start of load, rss less the heap's mapped blocks)
        self.kept_samples = []  # (seconds since start of load, kept bytes)
        self.memory_samples = []  # each minute: the node's own memory report and smaps_rollup
        self.group = MemoryGroup(f"imago-soak-{os.getpid()}-node{number}", CGROUP_MB) if CGROUP_MB else None

    def start(self):
        environment = dict(os.environ, IMAGO_PRESETS="thumb=rs:fill:120:120/q:70")
        command = [
            self.binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--cache-dir", self.cache,
            "--allow-private-addresses", "--key", KEY.hex(), "--salt", SALT.hex(),
            "--watermark-path", f"{self.origin_root}/basn6a08.png", "--memory-bytes", str(MEMORY_BYTES),
            "--source-timeout", "5", "--timeout", "10",
        ]
        if self.number == 1 and os.environ.get("SOAK_HEAPTRACK"):
            # heaptrack records every allocation of node 1; heaptrack_print reads the file after.
            command = ["heaptrack", "-o", f"{self.folder}/heaptrack"] + command
        log = open(f"{self.folder}/log", "ab")
        self.process = subprocess.Popen(command, stdout=log, stderr=log, env=environment, preexec_fn=self.group.join if self.group else None)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if get(self.port, "/health")[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"node {self.number} did not start; see {self.folder}/log")

    def status(self, field):
        with open(f"/proc/{self.server_pid()}/status") as file:
            for line in file:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
        return 0

    def metric(self, name):
        """One value of the node's /metrics (a full line name, labels included); None if absent."""
        try:
            text = get(self.port, "/metrics")[2].decode()
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith(name + " "):
                return int(float(line.split()[1]))
        return None

    def kept(self):
        """imago_serve_memory_kept_bytes from the node's /metrics."""
        return self.metric("imago_serve_memory_kept_bytes") or 0

    def sample(self, now):
        """VmRSS, and VmRSS less the blocks glibc mapped apart (images in flight), read together."""
        rss = self.status("VmRSS")
        mapped = self.metric('imago_serve_heap_bytes{kind="mapped"}')
        self.samples.append((now, rss))
        if rss and mapped is not None:
            self.settled_samples.append((now, rss - mapped))

    def memory(self, now):
        """The node's memory parts, resident set and glibc heap from /metrics, and the kernel's
        smaps_rollup (Rss, Anonymous, file-backed), in MB."""
        sample = {"t": round(now)}
        try:
            text = get(self.port, "/metrics")[2].decode()
        except OSError:
            return
        for line in text.splitlines():
            for prefix, key in (("imago_serve_memory_part_bytes{part=", "part"), ("imago_serve_heap_bytes{kind=", "heap"),
                                ("imago_serve_resident_bytes{kind=", "resident"), ("imago_serve_kept_entries{kind=", "entries")):
                if line.startswith(prefix):
                    name = line[len(prefix):].split('"')[1]
                    value = float(line.split()[-1])
                    sample[f"{key}_{name}"] = int(value) if key == "entries" else round(value / (1 << 20), 1)
        pid = self.server_pid()
        try:
            with open(f"/proc/{pid}/smaps_rollup") as file:
                for line in file:
                    field = line.split(":")[0]
                    if field in ("Rss", "Anonymous", "Pss_File", "Pss_Anon"):
                        sample[f"smaps_{field}"] = round(int(line.split()[1]) / 1024, 1)
        except OSError:
            pass
        self.memory_samples.append(sample)

    def server_pid(self):
        """The imago process: the one started, or heaptrack's child."""
        if not (os.environ.get("SOAK_HEAPTRACK") and self.number == 1):
            return self.process.pid
        found = subprocess.run(["pgrep", "-P", str(self.process.pid), "-f", "serve"], capture_output=True, text=True).stdout.split()
        return int(found[-1]) if found else self.process.pid

    def minute_means(self):
        """Mean RSS of each whole minute (samples each second), in MB."""
        minutes = {}
        for t, rss in self.samples:
            if rss:
                minutes.setdefault(int(t // 60), []).append(rss)
        return [round(sum(v) / len(v) / (1 << 20)) for _, v in sorted(minutes.items()) if len(v) >= 30]

    def mean_rss(self, start, end, samples=None):
        values = [rss for t, rss in (self.samples if samples is None else samples) if start <= t < end and rss]
        return sum(values) / len(values) if values else 0

    def fds(self):
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))


def cache_check(cache, killed_pid):
    """Every index row's payload file is there at its size; no temporary file of the killed process."""
    database = sqlite3.connect(f"file:{cache}/index.sqlite?mode=ro", uri=True)
    rows = database.execute("SELECT file, size FROM entry").fetchall()
    database.close()
    bad = [file for file, size in rows if not os.path.exists(f"{cache}/payloads/{file}") or os.path.getsize(f"{cache}/payloads/{file}") != size]
    temporaries = os.listdir(f"{cache}/tmp") if os.path.isdir(f"{cache}/tmp") else []
    stale = [name for name in temporaries if name.startswith(f"{killed_pid}-")]
    return len(rows), bad, stale


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else 0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary, json_out = os.path.abspath(sys.argv[1]), (sys.argv[2] if len(sys.argv) > 2 else None)
    for tool in ("nginx",):
        if not shutil.which(tool):
            sys.exit(f"soak needs {tool} (apt-get install {tool})")
    work = tempfile.mkdtemp(prefix="imago-soak.")
    os.chmod(work, 0o755)
    files, sources, hostile = load_sources()
    Origin.files = files
    origin_root = f"{work}/origin"
    os.makedirs(origin_root)
    open(f"{origin_root}/basn6a08.png", "wb").write(files["basn6a08.png"])
    origin_server = ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    origin_server.daemon_threads = True
    origin = origin_server.server_address[1]
    threading.Thread(target=origin_server.serve_forever, daemon=True).start()

    nodes = [Node(binary, work, i, origin_root) for i in (1, 2)]
    nginx_pid = None
    try:
        for node in nodes:
            node.start()
        front = free_port()
        conf = local_nginx.render(work, front, [node.port for node in nodes])
        subprocess.run(["nginx", "-q", "-t", "-p", f"{work}/nginx", "-c", conf, "-e", f"{work}/nginx/error.log"], check=True)
        subprocess.run(["nginx", "-p", f"{work}/nginx", "-c", conf, "-e", f"{work}/nginx/error.log"], check=True)
        for _ in range(100):
            try:
                if get(front, "/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        fds_before = [node.fds() for node in nodes]

        rng = random.Random(7)
        popular = [signed(variant_path(rng, "ok/" + rng.choice(sources), origin)) for _ in range(60)]
        recorder = Recorder()
        stop = threading.Event()
        print(f"soak: {SECONDS} s, {CLIENTS} clients, nginx on {front}, nodes on {nodes[0].port} and {nodes[1].port}, "
              f"{len(sources)} sources and {len(hostile)} hostile files, --memory-bytes {MEMORY_BYTES}", flush=True)
        clients = [threading.Thread(target=client, args=(i, stop, recorder, front, origin, sources, hostile, popular)) for i in range(CLIENTS)]
        start = time.time()
        for thread in clients:
            thread.start()

        kill_at, killed_pid, restarted, kill_report = SECONDS * 0.4, None, False, {}
        before_kill = []
        next_report = 60
        while time.time() - start < SECONDS:
            time.sleep(1)
            now = time.time() - start
            for node in nodes:
                if node.process.poll() is None:
                    node.sample(now)
                    if not node.kept_samples or now - node.kept_samples[-1][0] >= 10:
                        node.kept_samples.append((now, node.kept()))
                    if not node.memory_samples or now - node.memory_samples[-1]["t"] >= 60:
                        node.memory(now)
            if killed_pid is None and now >= kill_at:
                # The variants node 2 answered before the kill (nginx's log names the node).
                with recorder.lock:
                    before_kill = list(recorder.answered_ok)
                killed_pid = nodes[1].process.pid
                nodes[1].process.send_signal(signal.SIGKILL)
                nodes[1].process.wait()
                temporaries = os.listdir(f"{nodes[1].cache}/tmp") if os.path.isdir(f"{nodes[1].cache}/tmp") else []
                wal = f"{nodes[1].cache}/index.sqlite-wal"
                kill_report = {"atSeconds": round(now, 1), "temporaryFilesLeft": len(temporaries),
                               "walBytes": os.path.getsize(wal) if os.path.exists(wal) else 0}
                # A payload is a temporary file for a few milliseconds, so the kill rarely lands in
                # one: leave what it would leave, half a payload under the killed process's id.
                if not temporaries:
                    os.makedirs(f"{nodes[1].cache}/tmp", exist_ok=True)
                    with open(f"{nodes[1].cache}/tmp/{killed_pid}-{os.urandom(16).hex()}", "wb") as torn:
                        torn.write(files[sources[0]][: len(files[sources[0]]) // 2])
                    kill_report["plantedHalfWrittenPayload"] = True
                print(f"  {now:.0f} s: node 2 killed (SIGKILL): {kill_report}", flush=True)
            elif killed_pid is not None and not restarted and now >= kill_at + 10:
                nodes[1].samples.append((now, 0))
                nodes[1].start()
                restarted = True
                print(f"  {now:.0f} s: node 2 started again on its cache", flush=True)
            if now >= next_report:
                next_report += 60
                print(f"  {now:.0f} s: {sum(recorder.statuses.values())} answers; RSS, kept: "
                      + ", ".join(f"{n.samples[-1][1] >> 20} MB, {n.kept() >> 20} MB" for n in nodes if n.samples), flush=True)
        stop.set()
        for thread in clients:
            thread.join()
        time.sleep(3)
        fds_after = [node.fds() for node in nodes]
        kept_after = [node.kept() for node in nodes]

        # Node 2's cache after its restart, read straight from it.
        access = open(f"{work}/nginx/access.log").read().splitlines()
        node2 = f"upstream=127.0.0.1:{nodes[1].port}"
        paths_on_node2 = {line.split('"GET ')[1].split(" ")[0] for line in access if node2 in line and '" 200 ' in line}
        again = [(path, accept, etag) for path, accept, etag in before_kill if path in paths_on_node2][:300]
        reread_failures = []
        for path, accept, etag in again:
            status, headers, body = get(nodes[1].port, path, accept)
            if status != 200 or not decodable(body, headers.get("content-type", "")):
                reread_failures.append((path, status))
        rows, bad_rows, stale = cache_check(nodes[1].cache, killed_pid)

        latencies = [s for s in recorder.latencies]
        # Warm-up ends when node 1's kept variants reach 90% of --memory-bytes: until then its RSS
        # rises with them by design. The check: the resident set less the images in flight, the last
        # two minutes against the first two after warm-up. The raw RSS minutes are printed beside it.
        node1 = nodes[0]
        warm = next((t for t, kept in node1.kept_samples if kept >= 0.9 * MEMORY_BYTES), None)
        last_minute = node1.mean_rss(SECONDS - 60, SECONDS)
        second_minute = node1.mean_rss(60, 120)
        after_warm = node1.mean_rss(warm, warm + 60) if warm is not None and warm + 120 <= SECONDS else 0
        growth = last_minute / after_warm - 1 if after_warm else None
        settled_first = node1.mean_rss(warm, warm + 120, node1.settled_samples) if warm is not None and warm + 240 <= SECONDS else 0
        settled_last = node1.mean_rss(SECONDS - 120, SECONDS, node1.settled_samples)
        settled_growth = settled_last / settled_first - 1 if settled_first else None
        summary = {
            "seconds": SECONDS, "clients": CLIENTS, "memoryBytes": MEMORY_BYTES,
            "answers": sum(recorder.statuses.values()),
            "byStatus": {str(k): v for k, v in sorted(recorder.statuses.items())},
            "byKind": {kind: {str(k): v for k, v in sorted(statuses.items())} for kind, statuses in sorted(recorder.by_kind.items())},
            "p50ms": round(percentile(latencies, 0.5) * 1000, 1), "p99ms": round(percentile(latencies, 0.99) * 1000, 1),
            "rss": [{"node": n.number, "peakMB": max(r for _, r in n.samples) >> 20, "finalMB": n.samples[-1][1] >> 20} for n in nodes],
            "rssMinuteMeansMB": {f"node{n.number}": n.minute_means() for n in nodes},
            "keptBytesAfter": kept_after,
            "memoryEachMinuteMB": {f"node{n.number}": n.memory_samples for n in nodes},
            "node1WarmAtSeconds": warm,
            "node1RSSSecondMinuteMB": round(second_minute / (1 << 20)),
            "node1RSSFirstMinuteWarmMB": round(after_warm / (1 << 20)),
            "node1RSSLastMinuteMB": round(last_minute / (1 << 20)),
            "node1RSSGrowthSinceWarm": round(growth, 3) if growth is not None else None,
            "node1RSSGrowthSinceSecondMinute": round(last_minute / second_minute - 1, 3) if second_minute else None,
            "node1SettledFirstTwoWarmMinutesMB": round(settled_first / (1 << 20), 1),
            "node1SettledLastTwoMinutesMB": round(settled_last / (1 << 20), 1),
            "node1SettledGrowthSinceWarm": round(settled_growth, 3) if settled_growth is not None else None,
            "fdsBefore": fds_before, "fdsAfter": fds_after,
            "cgroup": [{"node": n.number, "limitMB": CGROUP_MB, "version": n.group.version, "oomKills": n.group.oom_kills(), "peakMB": n.group.peak_mb()}
                       for n in nodes if n.group],
            "unexpected5xx": recorder.unexpected[:20], "unexpected5xxCount": len(recorder.unexpected),
            "undecodable": recorder.undecodable[:20], "undecodableCount": len(recorder.undecodable),
            "kill": kill_report,
            "restartedCache": {"rows": rows, "rowsUnreadable": len(bad_rows), "staleTemporaryFiles": len(stale),
                               "variantsAskedAgain": len(again), "failedAgain": len(reread_failures)},
        }
        print(json.dumps({k: v for k, v in summary.items() if k != "memoryEachMinuteMB"}, indent=1))
        columns = ["t", "smaps_Rss", "smaps_Anonymous", "smaps_Pss_File", "heap_in_use", "heap_free_held", "heap_mapped",
                   "part_variants", "part_paths", "part_resumable", "part_overlays", "part_disk_pending", "entries_disk_rows",
                   "entries_connections", "entries_color_transforms"]
        print("node 1 each minute (MB): " + " ".join(columns))
        for sample in node1.memory_samples:
            print("  " + " ".join(str(sample.get(column, "-")) for column in columns))
        if json_out:
            with open(json_out, "w") as file:
                json.dump(summary, file, indent=1)
        failures = []
        if recorder.unexpected:
            failures.append(f"{len(recorder.unexpected)} answers were a 5xx other than 502/503/504")
        if recorder.undecodable:
            failures.append(f"{len(recorder.undecodable)} answers with status 200 did not decode")
        if bad_rows or stale or reread_failures:
            failures.append(f"node 2's cache: {len(bad_rows)} unreadable rows, {len(stale)} stale temporary files, "
                            f"{len(reread_failures)} variants not answered again")
        if settled_growth is None:
            failures.append("node 1's kept variants did not reach --memory-bytes in time to measure growth after it")
        elif settled_growth > 0.10:
            failures.append(f"node 1's resident set less images in flight grew {settled_growth:.0%} from the first two minutes after warm-up to the last two")
        for group in summary["cgroup"]:
            if group["oomKills"] != 0:
                failures.append(f"node {group['node']} was OOM-killed {group['oomKills']} times in its {CGROUP_MB} MB cgroup")
        if any(after > before + 16 for before, after in zip(fds_before, fds_after)):
            failures.append(f"file descriptors grew: {fds_before} → {fds_after}")
        for failure in failures:
            print("FAILED: " + failure)
        return 1 if failures else 0
    finally:
        for node in nodes:
            if node.process and node.process.poll() is None:
                # Under heaptrack the server is the script's child: end it first, or it outlives the soak.
                server = node.server_pid()
                if server != node.process.pid:
                    os.kill(server, signal.SIGTERM)
                node.process.terminate()
                node.process.wait()
            if node.group:
                node.group.remove()
        if os.path.exists(f"{work}/nginx/nginx.pid"):
            os.kill(int(open(f"{work}/nginx/nginx.pid").read()), signal.SIGTERM)
        origin_server.shutdown()
        if os.environ.get("SOAK_KEEP"):
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
