#!/usr/bin/env python3
"""`make test-image`: the OCI image deploy/image/build.sh made, run by podman under 256 MB.

Sources: four JPEGs of 12, 14.7, 24 and 48 MP (a corpus photo scaled up by ImageMagick), in a
folder mounted read-only as /images (local://) and served by an origin in this process (http).
Checked: the server sized itself from the container's limit (its first log line); `imago health`
passes through podman's health check; signed URLs answer 200 from both sources, a PDF page (poppler-utils in a child process) too, and an unsigned one
403; 16 fit-300 thumbnails at once are all 200; 16 full-size AVIF/JPEG XL/WebP/PNG encodes at once
answer only 200, 422 or 503; the container is never OOM-killed; `podman stop` (SIGTERM) lets a
request in flight finish with 200 and the server exit 0. Prints the image's size and the time taken.

On this VM podman needs `--runtime runc`, `--network host` and `--ulimit` values runc may set: the
hard limits of this shell, else the largest of a few lower ones that a container starts with.

Usage: test_image.py IMAGE_TAG
"""

import base64
import concurrent.futures
import hashlib
import hmac
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus")
SIZES = [(4000, 3000), (5120, 2880), (6000, 4000), (8000, 6000)]
KEY, SALT = os.urandom(32), os.urandom(16)
FAILURES = []


def check(condition, message):
    print(("ok   " if condition else "FAIL ") + message, flush=True)
    if not condition:
        FAILURES.append(message)


def signed(path):
    digest = hmac.new(KEY, SALT + path.encode(), hashlib.sha256).digest()
    return "/" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode() + path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def podman(*arguments, check_status=True, timeout=120):
    result = subprocess.run(["podman", *arguments], capture_output=True, text=True, timeout=timeout)
    if check_status and result.returncode != 0:
        raise SystemExit(f"podman {' '.join(arguments)}: {result.stderr.strip()}")
    return result


def ulimits(tag):
    """The --ulimit values runc may set here: the hard limits, else a lower one that starts."""
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    for nproc in [hard, 65536, 32768, 16384, 8192, 4096, 1024]:
        if nproc > hard and hard != resource.RLIM_INFINITY:
            continue
        flags = ["--ulimit", f"nofile={nofile}:{nofile}", "--ulimit", f"nproc={nproc}:{nproc}"]
        tried = podman("run", "--rm", "--runtime", "runc", "--network", "host", *flags, tag, "--version", check_status=False)
        if tried.returncode == 0:
            return flags
        last = tried.stderr.strip().splitlines()[-1:] or [""]
    # A machine where podman cannot start any container at all (no cgroups, no runc): said, not failed,
    # as the cgroup tests of `make test` are skipped where no group can be made.
    print(f"SKIPPED: podman cannot start a container here ({last[0]})")
    raise SystemExit(0)


class Origin(BaseHTTPRequestHandler):
    """Serves the photos; /slow/NAME sends one over about three seconds."""

    folder = ""

    def do_GET(self):
        slow = self.path.startswith("/slow/")
        name = os.path.basename(self.path.split("?")[0])
        # /burst-N-NAME: the same photo at many paths, so no two requests share a transfer.
        if name.startswith("burst-"):
            name = name.split("-", 2)[2]
        path = os.path.join(self.folder, name)
        if not os.path.isfile(path):
            self.send_error(404)
            return
        data = open(path, "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "image/jpeg")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        step = max(1, len(data) // 30) if slow else len(data)
        for start in range(0, len(data), step):
            self.wfile.write(data[start:start + step])
            if slow:
                self.wfile.flush()
                time.sleep(0.1)

    def log_message(self, *arguments):
        pass


def get(port, path, timeout=180):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)
    except Exception as error:  # the connection dropped: the server died
        return 0, str(error).encode(), {}


def main():
    tag = sys.argv[1]
    started = time.time()
    work = tempfile.mkdtemp(prefix="imago-image-test-")
    name = f"imago-test-{os.getpid()}"
    origin = None
    try:
        for width, height in SIZES:
            subprocess.run(
                ["/usr/bin/convert", os.path.join(CORPUS, "jpeg/video-001.jpeg"), "-resize", f"{width}x{height}!", "-quality", "90",
                 os.path.join(work, f"{width}x{height}.jpg")], check=True)
        # A PDF written by librsvg's rsvg-convert: a page rendered by poppler-utils in a child process.
        svg = os.path.join(work, "page.svg")
        with open(svg, "w") as f:
            f.write('<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><rect width="400" height="300" fill="#2050b0"/></svg>')
        subprocess.run(["/usr/bin/rsvg-convert", "-f", "pdf", "-o", os.path.join(work, "page.pdf"), svg], check=True)
        os.chmod(work, 0o755)
        Origin.folder = work
        origin = ThreadingHTTPServer(("127.0.0.1", 0), Origin)
        threading.Thread(target=origin.serve_forever, daemon=True).start()
        origin_url = f"http://127.0.0.1:{origin.server_address[1]}"
        port = free_port()
        flags = ulimits(tag)
        podman(
            "run", "-d", "--name", name, "--runtime", "runc", "--network", "host", "--memory", "256m", "--memory-swap", "256m", *flags,
            "-v", f"{work}:/images:ro", "-e", f"IMAGO_LISTEN=127.0.0.1:{port}", "-e", "IMAGO_LOCAL_ROOT=/images",
            "-e", f"IMGPROXY_KEY={KEY.hex()}", "-e", f"IMGPROXY_SALT={SALT.hex()}", "-e", "IMAGO_ALLOW_PRIVATE_ADDRESSES=true",
            "-e", "IMAGO_WORKERS=16", "-e", "IMAGO_PDF=true", tag)
        for _ in range(100):
            if podman("healthcheck", "run", name, check_status=False).returncode == 0:
                break
            time.sleep(0.2)
        check(podman("healthcheck", "run", name, check_status=False).returncode == 0, "podman's health check (imago health) passes")
        check(podman("exec", name, "/usr/local/bin/imago", "health", check_status=False).stdout.strip() == "ok", "imago health inside says ok")
        check(podman("exec", name, "id", "-u", check_status=False).stdout.strip() == "10001", "the server runs as user 10001, not root")
        logs = podman("logs", name).stdout + podman("logs", name).stderr
        check("container memory limit 256 MB: 32 MB kept" in logs, "the server sized itself from the container's 256 MB")

        photo = "5120x2880.jpg"
        local = get(port, signed(f"/rs:fit:300:300/plain/local:///{photo}@webp"))
        check(local[0] == 200 and local[2].get("Content-Type") == "image/webp", f"a signed local:// thumbnail: {local[0]}")
        remote = get(port, signed(f"/rs:fit:300:300/plain/{origin_url}/{photo}@jpg"))
        check(remote[0] == 200 and remote[2].get("Content-Type") == "image/jpeg", f"a signed http thumbnail: {remote[0]}")
        pdf = get(port, signed("/rs:fit:200:200/plain/local:///page.pdf@png"))
        rendered = pdf[0] == 200 and pdf[2].get("Content-Type") == "image/png"
        check(rendered, "a PDF page rendered by pdftoppm in the container" + ("" if rendered else f": {pdf[0]} {pdf[1][:120]!r}"))
        unsigned = get(port, f"/insecure/rs:fit:300:300/plain/local:///{photo}")
        check(unsigned[0] == 403, f"an unsigned URL is refused: {unsigned[0]}")

        names = [f"{w}x{h}.jpg" for w, h in SIZES]
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            thumbs = list(pool.map(lambda i: get(port, signed(f"/rs:fit:300:300/plain/{origin_url}/burst-{i}-{names[i % 4]}@webp")), range(16)))
        check(all(status == 200 for status, _, _ in thumbs), f"16 thumbnails of 12–48 MP at once: {[s for s, _, _ in thumbs]}")

        formats = ["avif", "jxl", "webp", "png"]
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            full = list(pool.map(lambda i: get(port, signed(f"/q:50/plain/{origin_url}/burst-{i + 16}-{names[i % 2]}@{formats[i % 4]}")), range(16)))
        statuses = [status for status, _, _ in full]
        check(all(status in (200, 422, 503) for status in statuses) and 200 in statuses, f"16 full-size encodes at once: {statuses}")
        inspect = podman("inspect", name, "--format", "{{.State.Running}} {{.State.OOMKilled}}").stdout.split()
        check(inspect == ["true", "false"], f"running, not OOM-killed: {inspect}")

        # A request in flight when podman stops the container: answered, then a clean exit.
        slow = {}
        thread = threading.Thread(target=lambda: slow.update(answer=get(port, signed(f"/rs:fit:200:200/plain/{origin_url}/slow/{names[0]}@jpg"))))
        thread.start()
        time.sleep(1)
        podman("stop", "-t", "20", name, timeout=60)
        thread.join()
        check(slow.get("answer", (0,))[0] == 200, f"the request in flight at podman stop was answered: {slow.get('answer', (0,))[0]}")
        code = podman("inspect", name, "--format", "{{.State.ExitCode}}").stdout.strip()
        check(code == "0", f"exit code after podman stop: {code}")
    finally:
        podman("rm", "-f", name, check_status=False)
        if origin:
            origin.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    size = int(podman("image", "inspect", tag, "--format", "{{.Size}}").stdout.strip())
    print(f"image {tag}: {size / 1e6:.1f} MB uncompressed; test took {time.time() - started:.0f} s")
    if FAILURES:
        raise SystemExit(f"{len(FAILURES)} checks failed")


if __name__ == "__main__":
    main()
