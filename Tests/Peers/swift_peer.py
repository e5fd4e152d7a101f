"""A real OpenStack Swift for Imago's tests: Debian's swift-proxy-server with tempauth (v1 auth),
its account, container and object servers on one device in a temporary folder, and memcached for
tempauth's tokens, all on 127.0.0.1.

Usage: swift_peer.py CONTAINER=FILE[,FILE...] ...  (each file uploaded under its base name)
Prints one JSON line (port, auth URL, user, key, the storage URL) once ready, then serves until
its standard input closes (the test ends), then stops every process it started.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

USER, KEY = "test:tester", "testing"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port, process, seconds=60):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if process.poll() is not None:
            raise SystemExit(f"{process.args[0]} ended with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


processes = []
roots = []


def stop(*_):
    for process in processes:
        process.kill()
        process.wait()
    processes.clear()
    for root in roots:
        shutil.rmtree(root, ignore_errors=True)
    roots.clear()


def start():
    """Starts every server on fresh ports in a fresh folder, uploads the files; returns the answer line."""
    root = tempfile.mkdtemp(prefix="imago-swift-")
    roots.append(root)
    devices = os.path.join(root, "srv")
    os.makedirs(os.path.join(devices, "d1"))
    ports = {name: free_port() for name in ("account", "container", "object", "proxy", "memcached")}
    with open(os.path.join(root, "swift.conf"), "w") as f:
        f.write("[swift-hash]\nswift_hash_path_suffix = imago\nswift_hash_path_prefix = tests\n"
                "[storage-policy:0]\nname = gold\ndefault = yes\n")
    for ring in ("account", "container", "object"):
        builder = os.path.join(root, f"{ring}.builder")
        for arguments in (["create", "4", "1", "1"], ["add", f"r1z1-127.0.0.1:{ports[ring]}/d1", "1"], ["rebalance"]):
            subprocess.run(["swift-ring-builder", builder] + arguments, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    common = (f"[DEFAULT]\nbind_ip = 127.0.0.1\nswift_dir = {root}\ndevices = {devices}\nmount_check = false\n"
              "workers = 0\nlog_name = swift\nlog_facility = LOG_LOCAL0\nlog_level = ERROR\nlog_address = /nonexistent\n")
    for server in ("account", "container", "object"):
        conf = os.path.join(root, f"{server}-server.conf")
        with open(conf, "w") as f:
            f.write(common + f"bind_port = {ports[server]}\n[pipeline:main]\npipeline = {server}-server\n"
                    f"[app:{server}-server]\nuse = egg:swift#{server}\n")
            if server == "container":
                f.write("[container-sync]\n")
    proxy = os.path.join(root, "proxy-server.conf")
    with open(proxy, "w") as f:
        f.write(common + f"bind_port = {ports['proxy']}\n"
                "[pipeline:main]\npipeline = catch_errors cache tempauth proxy-server\n"
                "[app:proxy-server]\nuse = egg:swift#proxy\naccount_autocreate = true\n"
                "[filter:catch_errors]\nuse = egg:swift#catch_errors\n"
                f"[filter:cache]\nuse = egg:swift#memcache\nmemcache_servers = 127.0.0.1:{ports['memcached']}\n"
                f"[filter:tempauth]\nuse = egg:swift#tempauth\nuser_test_tester = {KEY} .admin\n"
                f"storage_url_scheme = http\n")
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    memcached = subprocess.Popen(["memcached", "-l", "127.0.0.1", "-p", str(ports["memcached"]), "-U", "0", "-u", "nobody", "-m", "16"], **quiet)
    processes.append(memcached)
    for server in ("account", "container", "object", "proxy"):
        processes.append(subprocess.Popen([f"swift-{server}-server", os.path.join(root, f"{server}-server.conf")], **quiet))
    wait_for(ports["memcached"], memcached)
    for server, process in zip(("account", "container", "object", "proxy"), processes[1:]):
        wait_for(ports[server], process)

    auth_url = f"http://127.0.0.1:{ports['proxy']}/auth/v1.0"
    with urllib.request.urlopen(urllib.request.Request(auth_url, headers={"X-Auth-User": USER, "X-Auth-Key": KEY})) as answer:
        token, storage = answer.headers["X-Auth-Token"], answer.headers["X-Storage-Url"]
    etags = {}
    for argument in sys.argv[1:]:
        container, files = argument.split("=", 1)
        urllib.request.urlopen(urllib.request.Request(f"{storage}/{container}", method="PUT", headers={"X-Auth-Token": token})).close()
        for path in filter(None, files.split(",")):
            name = os.path.basename(path)
            with open(path, "rb") as f:
                request = urllib.request.Request(f"{storage}/{container}/{urllib.parse.quote(name)}", data=f.read(), method="PUT", headers={"X-Auth-Token": token})
            with urllib.request.urlopen(request) as answer:
                etags[f"{container}/{name}"] = answer.headers["ETag"]
    return {"port": ports["proxy"], "authURL": auth_url, "user": USER, "key": KEY, "storageURL": storage, "etags": etags}


# A port picked free can be taken by another process (the test suite's own connections use the
# same ephemeral range) before a server binds it: start again on new ports, and say why each try failed.
try:
    for attempt in range(3):
        try:
            answer = start()
            break
        except (Exception, SystemExit) as failure:
            print(f"swift_peer: try {attempt + 1} failed: {failure!r}", file=sys.stderr, flush=True)
            stop()
    else:
        raise SystemExit("swift_peer: could not start in 3 tries")
    print(json.dumps(answer), flush=True)
    signal.signal(signal.SIGTERM, stop)
    sys.stdin.read()
finally:
    stop()
