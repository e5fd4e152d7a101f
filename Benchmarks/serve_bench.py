"""`imago serve` against thumbor 7.8 and nginx, as `imago-bench server` runs it (issues 14, 29, 30).

Cold: 100 distinct JPEG sources of about 2 MP on a local nginx origin, fit in 512×512, as WebP and
as JPEG (quality 80), two clients on keep-alive connections; each server is started fresh for
each round, so nothing is cached; three rounds alternate between the servers. Hot: one variant already made, repeated by wrk (2 threads, 2
connections) against Imago (its encoded-variant memory), thumbor (its file result storage) and
nginx serving the same bytes as a static file. Peak RSS is the servers' VmHWM (thumbor: the sum
over its processes). Options (issue 29): the 100 sources cold with twelve imgproxy option sets in
turn against thumbor's URLs for the same pictures; smart gravity against a centre crop; max_bytes
in encodes per image (from Imago's imago_serve_encodes_total). thumbor's URLs (issue 30): the same
thumbor URLs to thumbor and to `imago serve --dialect thumbor`, cold and one hot.

Usage: python serve_bench.py IMAGO_BINARY   (the bench venv's python: Pillow and thumbor)
       SERVE_BENCH_ONLY=thumbor-dialect python serve_bench.py IMAGO_BINARY   (only issue 30's rows)
"""

import io
import http.client
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from PIL import Image

SOURCES = 100
BOX = 512
QUALITY = 80
CLIENTS = 2
ROUNDS = 3
HOT_SECONDS = 5
PHOTOS = ["/usr/share/backgrounds/" + name for name in ("2004default.jpg", "firstgeneration.jpg", "rhythm.jpg", "string.jpg", "the-mouse.jpg")]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port, path="/", seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", path)
            connection.getresponse().read()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing answered on port {port}")


def make_sources(folder):
    """100 distinct ~2 MP JPEGs (1800×1100, quality 90): crops of the ukui photos at different places."""
    os.makedirs(folder)
    index = 0
    per_photo = SOURCES // len(PHOTOS)
    for photo in PHOTOS:
        with Image.open(photo) as image:
            image = image.convert("RGB")
            width, height = image.size
            for k in range(per_photo):
                # Windows of 1.2–1.8× the target, scaled down to 1800×1100, at spread-out places.
                scale = 1.2 + 0.6 * (k % 4) / 3
                w, h = min(width, int(1800 * scale)), min(height, int(1100 * scale))
                x = (k * 7919) % max(1, width - w)
                y = (k * 104729) % max(1, height - h)
                crop = image.crop((x, y, x + w, y + h)).resize((1800, 1100), Image.LANCZOS)
                crop.save(f"{folder}/src-{index:03d}.jpg", quality=90)
                index += 1


def peak_rss_mb(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as status:
                match = re.search(r"VmHWM:\s+(\d+) kB", status.read())
                total += int(match.group(1)) if match else 0
        except OSError:
            pass
    return total / 1024


def process_tree(pid):
    """pid and its children (thumbor --processes forks)."""
    found = [pid]
    try:
        children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    except OSError:
        children = []
    for child in children:
        found += process_tree(int(child))
    return found


class Server:
    def __init__(self, name, command, port, env=None, health="/", log=None):
        """`log`: a file the server's standard error is appended to (its request log), else none."""
        self.name, self.port = name, port
        errors = open(log, "ab") if log else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, env=env, start_new_session=True)
        finally:
            if log:
                errors.close()
        wait_for(port, health)

    def peak_rss(self):
        return peak_rss_mb(process_tree(self.process.pid))

    def stop(self):
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def start_imago(binary, folder, extra=(), log=None):
    port = free_port()
    command = [binary, "serve", "--listen", f"127.0.0.1:{port}", "--allow-private-addresses", "--quality", str(QUALITY), *extra]
    return Server("imago", command, port, health="/health", log=log)


def start_thumbor(folder, result_storage, extra_conf=()):
    port = free_port()
    conf = f"{folder}/thumbor-{port}.conf"
    with open(conf, "w") as out:
        out.write(
            "\n".join(
                [
                    "LOADER = 'thumbor.loaders.http_loader'",
                    "STORAGE = 'thumbor.storages.no_storage'",
                    f"RESULT_STORAGE = {'thumbor.result_storages.file_storage' if result_storage else None!r}",
                    f"RESULT_STORAGE_FILE_STORAGE_ROOT_PATH = '{folder}/thumbor-results-{port}'",
                    f"QUALITY = {QUALITY}",
                    "ALLOW_UNSAFE_URL = True",
                    "AUTO_WEBP = False",
                    "MAX_AGE = 31536000",
                    *extra_conf,
                ]
            )
            + "\n"
        )
    python = os.path.dirname(sys.executable)
    return Server("thumbor", [f"{python}/thumbor", "-p", str(port), "-i", "127.0.0.1", "-c", conf, "--processes", str(os.cpu_count())], port, health="/healthcheck")


def start_nginx(folder, root):
    port = free_port()
    os.makedirs(f"{folder}/nginx", exist_ok=True)
    conf = f"{folder}/nginx/nginx.conf"
    user = "user root;" if os.getuid() == 0 else ""
    with open(conf, "w") as out:
        out.write(
            f"""{user}
worker_processes auto;
pid {folder}/nginx/nginx.pid;
error_log {folder}/nginx/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log {folder}/nginx/access.log;
    sendfile on;
    tcp_nopush on;
    types {{ image/jpeg jpg; image/webp webp; image/png png; }}
    client_body_temp_path {folder}/nginx/body;
    proxy_temp_path {folder}/nginx/proxy;
    fastcgi_temp_path {folder}/nginx/fastcgi;
    uwsgi_temp_path {folder}/nginx/uwsgi;
    scgi_temp_path {folder}/nginx/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        expires 1h;
    }}
}}
"""
        )
    subprocess.run(["nginx", "-p", f"{folder}/nginx", "-c", conf, "-e", f"{folder}/nginx/error.log"], check=True)
    wait_for(port, "/src-000.jpg")
    return port


def requests(server, paths, keep=0):
    """Every path once, CLIENTS at a time on keep-alive connections: the seconds taken, each
    request's latency, each answer's size, and the bodies of the first `keep` paths by index."""
    work = queue.Queue()
    for index, path in enumerate(paths):
        work.put((index, path))
    latencies, sizes, kept, failures = [], [0] * len(paths), {}, []

    def client():
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        while True:
            try:
                index, path = work.get_nowait()
            except queue.Empty:
                return
            start = time.perf_counter()
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            latencies.append(time.perf_counter() - start)
            if response.status != 200 or len(body) == 0:
                failures.append((path, response.status))
            sizes[index] = len(body)
            if index < keep:
                kept[index] = body

    start = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    if failures:
        raise RuntimeError(f"{server.name}: {len(failures)} failed, first {failures[0]}")
    return elapsed, latencies, sizes, kept


def cold(server, paths):
    """Every path once (``requests``): (requests/s, p50 ms, p99 ms)."""
    elapsed, latencies, _, _ = requests(server, paths)
    latencies.sort()
    return len(paths) / elapsed, latencies[len(latencies) // 2] * 1000, latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000


def stage_means(port):
    """Imago's mean milliseconds per new image for each stage, from its /metrics histograms."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    means = {}
    for stage in ("fetch", "decode_process", "encode", "request"):
        total = re.search(rf"^imago_serve_{stage}_duration_seconds_sum (\S+)$", text, re.M)
        count = re.search(rf"^imago_serve_{stage}_duration_seconds_count (\S+)$", text, re.M)
        if total and count and float(count.group(1)) > 0:
            means[stage] = 1000 * float(total.group(1)) / float(count.group(1))
    encodes = re.search(r"^imago_serve_encodes_total (\S+)$", text, re.M)
    if encodes:
        means["encodes"] = float(encodes.group(1))
    return means


def webp_encoders(photo):
    """Milliseconds for one libwebp encode (quality QUALITY, method 4, the defaults both servers
    use) of a photo fitted in BOX: Debian's libwebp, which Imago links, and the one bundled in
    Pillow's wheel, which thumbor uses; best of three runs of 20 encodes each, through ctypes."""
    import ctypes
    import glob

    with Image.open(photo) as image:
        image = image.convert("RGB")
        image.thumbnail((BOX, BOX))
        width, height = image.size
        raw = image.tobytes()
    bundled = glob.glob(os.path.join(os.path.dirname(Image.__file__), "..", "pillow.libs", "libwebp-*.so*"))
    found = {}
    for name, path in (("Debian", "libwebp.so.7"), ("Pillow", bundled[0] if bundled else None)):
        if not path:
            continue
        library = ctypes.CDLL(path)
        version = library.WebPGetEncoderVersion()
        output = ctypes.POINTER(ctypes.c_uint8)()
        library.WebPEncodeRGB.restype = ctypes.c_size_t
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(20):
                library.WebPEncodeRGB(raw, width, height, width * 3, ctypes.c_float(QUALITY), ctypes.byref(output))
                library.WebPFree(output)
            best = min(best, (time.perf_counter() - start) / 20)
        found[name] = (f"{version >> 16}.{(version >> 8) & 255}.{version & 255}", best * 1000)
    return f"{width}×{height}", found


def wrk(port, path, connections=2):
    """Requests per second wrk measures on one URL, HOT_SECONDS long, over CONNECTIONS connections."""
    output = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{HOT_SECONDS}s", f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True, check=True
    ).stdout
    match = re.search(r"Requests/sec:\s+([\d.]+)", output)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if not match or non2xx:
        raise RuntimeError(f"wrk: {output}")
    return float(match.group(1))


def overload(binary, folder, origin, clients=64):
    """CLIENTS requests at once, each for a different source: how many were made, how many got 503,
    and the server's peak RSS (the work limit, not the load, should bound it)."""
    server = start_imago(binary, folder)
    statuses = []
    try:
        barrier = threading.Barrier(clients)

        def client(index):
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
            connection.connect()
            barrier.wait()
            connection.request("GET", imago_path(origin, index % SOURCES, "webp").replace(f"{BOX}:{BOX}", f"{BOX + index // SOURCES}:{BOX}"))
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)

        threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        rss = server.peak_rss()
    finally:
        server.stop()
    return statuses.count(200), statuses.count(503), rss


def imago_path(origin, index, extension):
    return f"/insecure/rs:fit:{BOX}:{BOX}/plain/http%3A%2F%2F127.0.0.1%3A{origin}%2Fsrc-{index:03d}.jpg@{extension}"


def thumbor_path(origin, index, extension):
    return f"/unsafe/fit-in/{BOX}x{BOX}/filters:format({'jpeg' if extension == 'jpg' else extension})/127.0.0.1:{origin}/src-{index:03d}.jpg"


# imgproxy options and the thumbor URL that asks for the same picture (sources are 1800×1100, so
# imgproxy's centred 800×600 crop is thumbor's box 500,250–1300,850). thumbor's smart/ without its
# optional face and feature detectors installed falls back to the centre.
OPTION_PAIRS = [
    ("c:800:600/rs:fill:300:200", "500x250:1300x850/300x200"),
    ("rs:fit:512:512/rot:90", "fit-in/512x512/filters:rotate(90)"),
    ("rs:fit:512:512/fl:1:0", "fit-in/-512x512"),
    ("rs:fit:512:512/sh:1", "fit-in/512x512/filters:sharpen(2,1,true)"),
    ("rs:fit:512:512/bl:3", "fit-in/512x512/filters:blur(3)"),
    ("rs:fit:512:512/wm:0.5:soea:10:10", "fit-in/512x512/filters:watermark({origin}/wm.png,-10,-10,50)"),
    ("rs:fit:512:512:0:1/bg:ffffff", "fit-in/512x512/filters:fill(white)"),
    ("t:10/rs:fit:512:512", "trim/fit-in/512x512"),
    ("rs:fit:512:512/q:60", "fit-in/512x512/filters:quality(60)"),
    ("rs:fit:512:512/mb:20000", "fit-in/512x512/filters:max_bytes(20000)"),
    ("rs:fit:512:512/f:webp", "fit-in/512x512/filters:format(webp)"),
    ("rs:fill:300:300/g:sm", "300x300/smart"),
]


def option_paths(origin, server):
    """One URL per source, cycling through OPTION_PAIRS."""
    paths = []
    for index in range(SOURCES):
        imgproxy, thumbor = OPTION_PAIRS[index % len(OPTION_PAIRS)]
        source = f"127.0.0.1:{origin}/src-{index:03d}.jpg"
        if server == "imago":
            paths.append(f"/insecure/{imgproxy}/plain/http%3A%2F%2F{source.replace(':', '%3A').replace('/', '%2F')}")
        else:
            paths.append(f"/unsafe/{thumbor.format(origin=f'127.0.0.1:{origin}')}/{source}")
    return paths


def cold_rounds(arms):
    """Each arm (name, start, paths) on freshly started servers, ROUNDS alternating rounds: the
    round with the median rate of each, with Imago's stage means and counters for that round."""
    results = {name: [] for name, _, _ in arms}
    for _ in range(ROUNDS):
        for name, start, paths in arms:
            server = start()
            try:
                rate, p50, p99 = cold(server, paths)
                extra = stage_means(server.port) if server.name == "imago" else {}
                results[name].append((rate, p50, p99, server.peak_rss(), extra))
            finally:
                server.stop()
    return {name: sorted(rounds, key=lambda r: r[0])[len(rounds) // 2] for name, rounds in results.items()}


def options_benchmarks(binary, folder, origin):
    """Cold serving with imgproxy's options against thumbor's equivalents; smart crop against a
    centre crop; max_bytes in encodes."""
    watermark = Image.new("RGBA", (120, 60), (255, 255, 255, 160))
    watermark.save(f"{folder}/origin/wm.png")
    found = cold_rounds([
        ("imago", lambda: start_imago(binary, folder, ["--watermark-path", f"{folder}/origin/wm.png"]), option_paths(origin, "imago")),
        ("thumbor", lambda: start_thumbor(folder, result_storage=False), option_paths(origin, "thumbor")),
    ])
    (ir, i50, i99, irss, _), (tr, t50, t99, trss, _) = found["imago"], found["thumbor"]
    report(
        f"serve cold with options, {SOURCES} sources, {len(OPTION_PAIRS)} option sets in turn (crop, rotate, flip, sharpen, blur, "
        f"watermark, extend, trim, quality, max_bytes, webp, smart), median of {ROUNDS} alternating rounds",
        f"{ir:.1f} req/s, p50 {i50:.0f} ms, p99 {i99:.0f} ms, peak RSS {irss:.0f} MB",
        f"thumbor {tr:.1f} req/s, p50 {t50:.0f} ms, p99 {t99:.0f} ms, peak RSS {trss:.0f} MB",
        ir / tr,
        1,
    )

    (cr, _, _, _, cs), (sr, _, _, _, ss) = imago_arms(binary, folder, origin, ["rs:fill:300:300/g:ce", "rs:fill:300:300/g:sm"])
    print(f"smart crop against a centre crop, cold, {SOURCES} sources → fill 300×300 JPEG, median of {ROUNDS} alternating rounds")
    print(f"  centre: {cr:.1f} req/s, decode + process {cs.get('decode_process', 0):.1f} ms per image")
    print(f"  smart:  {sr:.1f} req/s, decode + process {ss.get('decode_process', 0):.1f} ms per image")
    print(f"  cost per image: {cr / sr:.2f}× the centre crop's  target ≤ 1.2×  {'MET' if cr / sr <= 1.2 else 'NOT MET'}")
    print("", flush=True)

    (pr, _, _, _, ps), (br, _, _, _, bs) = imago_arms(binary, folder, origin, ["rs:fit:512:512", "rs:fit:512:512/mb:15000"])
    print(f"max_bytes:15000 against none, cold, {SOURCES} sources → fit 512 JPEG q{QUALITY}, median of {ROUNDS} alternating rounds")
    for name, rate, stages in (("none", pr, ps), ("max_bytes", br, bs)):
        encodes, encode = stages.get("encodes", 0) / SOURCES, stages.get("encode", 0)
        print(f"  {name + ':':<10} {rate:.1f} req/s, {encodes:.2f} encodes per image, encode {encode:.1f} ms per image")
    print(f"  cost per image: {pr / br:.2f}×  (at most 6 encodes each)")
    print("", flush=True)


def fetch(port, path):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, response.getheader("Content-Type"), response.read()


def thumbor_dialect_benchmarks(binary, folder, origin):
    """The same thumbor URLs (OPTION_PAIRS' thumbor side) to thumbor and to `imago serve --dialect
    thumbor`: the same status, type and size checked first; then cold rounds, and one URL hot."""
    paths = option_paths(origin, "thumbor")
    start_dialect = lambda: start_imago(binary, folder, ["--dialect", "thumbor"])
    imago, thumbor = start_dialect(), start_thumbor(folder, result_storage=False)
    try:
        for path in paths[: len(OPTION_PAIRS)]:
            answers = [fetch(server.port, path) for server in (imago, thumbor)]
            sizes = [Image.open(io.BytesIO(body)).size if status == 200 else None for status, _, body in answers]
            if [a[:2] for a in answers] != [answers[1][:2]] * 2 or sizes[0] != sizes[1]:
                raise RuntimeError(f"thumbor dialect differs from thumbor for {path}: {[a[:2] for a in answers]} {sizes}")
    finally:
        imago.stop()
        thumbor.stop()
    found = cold_rounds([("imago", start_dialect, paths), ("thumbor", lambda: start_thumbor(folder, result_storage=False), paths)])
    (ir, i50, i99, irss, _), (tr, t50, t99, trss, _) = found["imago"], found["thumbor"]
    report(
        f"serve cold, thumbor's URLs to both (imago --dialect thumbor), {SOURCES} sources, {len(OPTION_PAIRS)} URL shapes in turn, "
        f"median of {ROUNDS} alternating rounds",
        f"{ir:.1f} req/s, p50 {i50:.0f} ms, p99 {i99:.0f} ms, peak RSS {irss:.0f} MB",
        f"thumbor {tr:.1f} req/s, p50 {t50:.0f} ms, p99 {t99:.0f} ms, peak RSS {trss:.0f} MB",
        ir / tr,
        1,
    )
    imago, thumbor = start_dialect(), start_thumbor(folder, result_storage=True)
    try:
        path = thumbor_path(origin, 0, "webp")
        for server in (imago, thumbor):
            fetch(server.port, path)
        rates = {"imago": [], "thumbor": []}
        for _ in range(ROUNDS):
            rates["imago"].append(wrk(imago.port, path))
            rates["thumbor"].append(wrk(thumbor.port, path))
        irate, trate = (sorted(rates[name])[ROUNDS // 2] for name in ("imago", "thumbor"))
    finally:
        imago.stop()
        thumbor.stop()
    report(
        f"serve hot, one thumbor URL repeated to both (imago --dialect thumbor), wrk 2 connections, {HOT_SECONDS} s, median of {ROUNDS}",
        f"{irate:.0f} req/s",
        f"thumbor (file result storage) {trate:.0f} req/s",
        irate / trate,
        50,
    )


DETECTORS = ["thumbor.detectors.face_detector", "thumbor.detectors.feature_detector"]


def make_face_sources(folder):
    """The 100 sources with a 4×3 group of LFW faces (scikit-image's lfw_subset, 120 px each)
    pasted into every second one at a different place: faces-NNN.jpg, quality 90."""
    import importlib.util

    import numpy as np

    faces = np.load(os.path.join(os.path.dirname(importlib.util.find_spec("skimage").origin), "data", "lfw_subset.npy"))
    side, gap = 120, 30
    group = Image.new("L", (4 * side + 5 * gap, 3 * side + 4 * gap), 128)
    for index in range(12):
        face = Image.fromarray((faces[index] * 255).round().astype(np.uint8)).resize((side, side), Image.BILINEAR)
        row, column = divmod(index, 4)
        group.paste(face, (gap + column * (side + gap), gap + row * (side + gap)))
    group = group.convert("RGB")
    for index in range(SOURCES):
        with Image.open(f"{folder}/src-{index:03d}.jpg") as source:
            image = source.convert("RGB")
            if index % 2 == 0:
                x = (index * 7919) % (image.width - group.width)
                y = (index * 104729) % (image.height - group.height)
                image.paste(group, (x, y))
            image.save(f"{folder}/faces-{index:03d}.jpg", quality=90)


def smart_detector_benchmarks(binary, folder, origin):
    """`/smart/` cold with thumbor's face and feature detectors: the same thumbor URLs to thumbor
    7.8 (OpenCV 4.14) and to `imago serve --dialect thumbor --thumbor-detectors`, half the sources
    with a group of faces; the same status, type, size and focal points checked first."""
    make_face_sources(f"{folder}/origin")
    paths = [f"/unsafe/300x300/smart/127.0.0.1:{origin}/faces-{i:03d}.jpg" for i in range(SOURCES)]
    start_dialect = lambda: start_imago(binary, folder, ["--dialect", "thumbor", "--thumbor-detectors", ",".join(DETECTORS)])
    start_peer = lambda: start_thumbor(folder, result_storage=False, extra_conf=[f"DETECTORS = {DETECTORS!r}"])
    imago, thumbor = start_dialect(), start_peer()
    try:
        for index in (0, 1, 2, 3):
            path = paths[index]
            answers = [fetch(server.port, path) for server in (imago, thumbor)]
            sizes = [Image.open(io.BytesIO(body)).size if status == 200 else None for status, _, body in answers]
            if [a[:2] for a in answers] != [answers[1][:2]] * 2 or sizes[0] != sizes[1]:
                raise RuntimeError(f"imago differs from thumbor for {path}: {[a[:2] for a in answers]} {sizes}")
            import json

            meta = [json.loads(fetch(server.port, path.replace("/unsafe/", "/unsafe/meta/"))[2]) for server in (imago, thumbor)]
            points = [sorted((p["x"], p["y"], p["origin"]) for p in m["thumbor"]["focal_points"]) for m in meta]
            print(f"  {path.rsplit('/', 1)[1]}: imago {len(points[0])} focal points ({points[0][0][2] if points[0] else 'none'}), "
                  f"thumbor {len(points[1])} ({points[1][0][2] if points[1] else 'none'}), the same: {points[0] == points[1]}")
    finally:
        imago.stop()
        thumbor.stop()
    found = cold_rounds([("imago", start_dialect, paths), ("thumbor", start_peer, paths)])
    (ir, i50, i99, irss, stages), (tr, t50, t99, trss, _) = found["imago"], found["thumbor"]
    report(
        f"serve cold /smart/ with DETECTORS = face, feature (thumbor's URLs to both), {SOURCES} sources of 1800×1100, half with 12 faces, "
        f"300x300/smart, median of {ROUNDS} alternating rounds",
        f"{ir:.1f} req/s, p50 {i50:.0f} ms, p99 {i99:.0f} ms, peak RSS {irss:.0f} MB, decode + detect + process {stages.get('decode_process', 0):.1f} ms per image",
        f"thumbor {tr:.1f} req/s, p50 {t50:.0f} ms, p99 {t99:.0f} ms, peak RSS {trss:.0f} MB",
        ir / tr,
        2,
    )


def imago_arms(binary, folder, origin, option_sets):
    """Imago alone, cold over the sources as JPEG with each option set: the median round of each."""
    path = lambda options, i: f"/insecure/{options}/plain/http%3A%2F%2F127.0.0.1%3A{origin}%2Fsrc-{i:03d}.jpg@jpg"
    found = cold_rounds([(options, lambda: start_imago(binary, folder), [path(options, i) for i in range(SOURCES)]) for options in option_sets])
    return [found[options] for options in option_sets]


def report(name, imago, peer, ratio, target):
    print(name)
    print(f"  imago: {imago}")
    print(f"  peer:  {peer}")
    print(f"  ratio: {ratio:.2f}×  target ≥ {target}×  {'MET' if ratio >= target else 'NOT MET'}")
    print("", flush=True)


def hot_benchmarks(binary, folder, origin):
    """One variant made once, then repeated by wrk: Imago, thumbor with result storage, and nginx
    serving the same bytes as a static file (2 and 32 connections)."""
    # Hot: one variant made once, then repeated.
    imago = start_imago(binary, folder)
    thumbor = start_thumbor(folder, result_storage=True)
    try:
        ipath, tpath = imago_path(origin, 0, "webp"), thumbor_path(origin, 0, "webp")
        connection = http.client.HTTPConnection("127.0.0.1", imago.port, timeout=60)
        connection.request("GET", ipath)
        made = connection.getresponse().read()
        with open(f"{folder}/origin/hot.webp", "wb") as out:
            out.write(made)
        connection = http.client.HTTPConnection("127.0.0.1", thumbor.port, timeout=60)
        connection.request("GET", tpath)
        connection.getresponse().read()
        rates = {"imago": [], "thumbor": [], "nginx": [], "imago32": [], "nginx32": []}
        for _ in range(ROUNDS):
            rates["imago"].append(wrk(imago.port, ipath))
            rates["thumbor"].append(wrk(thumbor.port, tpath))
            rates["nginx"].append(wrk(origin, "/hot.webp"))
            rates["imago32"].append(wrk(imago.port, ipath, connections=32))
            rates["nginx32"].append(wrk(origin, "/hot.webp", connections=32))
        irate, trate, nrate, irate32, nrate32 = (
            sorted(rates[name])[ROUNDS // 2] for name in ("imago", "thumbor", "nginx", "imago32", "nginx32")
        )
        irss, trss = imago.peak_rss(), thumbor.peak_rss()
    finally:
        imago.stop()
        thumbor.stop()
    report(
        f"serve hot, one variant repeated ({len(made)} B WebP), wrk 2 threads 2 connections, {HOT_SECONDS} s, median of {ROUNDS} alternating",
        f"{irate:.0f} req/s, peak RSS {irss:.0f} MB",
        f"thumbor (file result storage) {trate:.0f} req/s, peak RSS {trss:.0f} MB",
        irate / trate,
        50,
    )
    report(
        "serve hot against nginx serving the same bytes as a static file (the limit), 2 connections",
        f"{irate:.0f} req/s",
        f"nginx {nrate:.0f} req/s",
        irate / nrate,
        0.8,
    )
    report(
        "serve hot against nginx serving the same bytes as a static file, 32 connections",
        f"{irate32:.0f} req/s",
        f"nginx {nrate32:.0f} req/s",
        irate32 / nrate32,
        0.6,
    )


def origin_with_sources(prefix):
    """A new folder with the SOURCES under origin/ served by a local nginx: (folder, its port)."""
    folder = tempfile.mkdtemp(prefix=prefix)
    os.chmod(folder, 0o755)
    make_sources(f"{folder}/origin")
    return folder, start_nginx(folder, f"{folder}/origin")


def stop_nginx_and_remove(folder):
    """Stops the origin start_nginx started in `folder`, and removes the folder."""
    pid_file = f"{folder}/nginx/nginx.pid"
    if os.path.exists(pid_file):
        with open(pid_file) as pid:
            os.kill(int(pid.read().strip()), signal.SIGTERM)
        time.sleep(0.5)
    shutil.rmtree(folder, ignore_errors=True)


def main():
    binary = sys.argv[1]
    folder, origin = origin_with_sources("imago-serve-bench-")
    try:
        version = subprocess.run([os.path.dirname(sys.executable) + "/thumbor", "--version"], capture_output=True, text=True).stdout.strip()
        print(f"server: {SOURCES} sources of 1800×1100 (2 MP) on a local nginx origin, fit {BOX}×{BOX}, q{QUALITY}, {CLIENTS} clients; thumbor {version} with {os.cpu_count()} processes, PIL engine")
        print("", flush=True)

        if os.environ.get("SERVE_BENCH_ONLY") == "hot":
            hot_benchmarks(binary, folder, origin)
            return
        if os.environ.get("SERVE_BENCH_ONLY") == "smart-detectors":
            smart_detector_benchmarks(binary, folder, origin)
            return
        if os.environ.get("SERVE_BENCH_ONLY") == "thumbor-dialect":
            # Only the thumbor-dialect rows (they need the watermark the options rows make).
            Image.new("RGBA", (120, 60), (255, 255, 255, 160)).save(f"{folder}/origin/wm.png")
            thumbor_dialect_benchmarks(binary, folder, origin)
            return

        stages = {"webp": [], "jpg": []}
        for extension in ("webp", "jpg"):
            # Rounds alternate between the servers, each round on freshly started ones; the round
            # with the median rate is reported for each.
            results = {"imago": [], "thumbor": []}
            for _ in range(ROUNDS):
                for name, start, path in (
                    ("imago", lambda: start_imago(binary, folder), imago_path),
                    ("thumbor", lambda: start_thumbor(folder, result_storage=False), thumbor_path),
                ):
                    server = start()
                    try:
                        rate, p50, p99 = cold(server, [path(origin, i, extension) for i in range(SOURCES)])
                        results[name].append((rate, p50, p99, server.peak_rss()))
                        if name == "imago":
                            stages[extension].append(stage_means(server.port))
                    finally:
                        server.stop()
            (ir, i50, i99, irss), (tr, t50, t99, trss) = (sorted(results[name])[len(results[name]) // 2] for name in ("imago", "thumbor"))
            rounds = lambda name: " ".join(f"{r[0]:.0f}" for r in results[name])
            report(
                f"serve cold, {SOURCES} distinct sources → {extension.upper()} fit {BOX} (median of {ROUNDS} alternating rounds)",
                f"{ir:.1f} req/s, p50 {i50:.0f} ms, p99 {i99:.0f} ms, peak RSS {irss:.0f} MB (rounds: {rounds('imago')} req/s)",
                f"thumbor {tr:.1f} req/s, p50 {t50:.0f} ms, p99 {t99:.0f} ms, peak RSS {trss:.0f} MB (rounds: {rounds('thumbor')} req/s)",
                ir / tr,
                2,
            )
            # Where Imago's time went, per new image (wall time of each stage, mean over all rounds).
            mean = lambda key: sum(s.get(key, 0) for s in stages[extension]) / len(stages[extension])
            print(
                f"  imago per image: fetch {mean('fetch'):.1f} ms, decode + resize {mean('decode_process'):.1f} ms, "
                f"encode {mean('encode'):.1f} ms, whole request {mean('request'):.1f} ms"
            )
            print("", flush=True)

        options_benchmarks(binary, folder, origin)
        thumbor_dialect_benchmarks(binary, folder, origin)

        size, encoders = webp_encoders(PHOTOS[0])
        print(f"libwebp alone: one {size} encode, q{QUALITY}, method 4 (best of 3 × 20)")
        for name, (version, ms) in encoders.items():
            print(f"  {name} libwebp {version}: {ms:.1f} ms")
        print("", flush=True)

        made, refused, rss = overload(binary, folder, origin)
        print(f"serve overload, 64 requests at once for distinct images (work limit {4 * os.cpu_count()})")
        print(f"  imago: {made} made, {refused} answered 503 with Retry-After, peak RSS {rss:.0f} MB")
        print("", flush=True)

        hot_benchmarks(binary, folder, origin)
    finally:
        stop_nginx_and_remove(folder)


if __name__ == "__main__":
    main()
