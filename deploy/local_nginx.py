#!/usr/bin/env python3
"""deploy/nginx.conf made to run on loopback by a user, for `make cluster-demo` and `make soak`.

The node lines, the listen port and the paths are rewritten; nothing else, so what runs is the
deployed file. With an origin port and folder, a second server block serves that folder as the
sources' origin (fresh for an hour).

Usage: local_nginx.py WORK FRONT_PORT NODE_PORT,NODE_PORT... [ORIGIN_PORT ORIGIN_ROOT]
Writes WORK/nginx/nginx.conf and makes the folders nginx needs there. NGINX_CONF names another
file of deploy/ to render (nginx-fleet.conf).
"""

import os
import re
import sys

DEPLOY = os.path.dirname(os.path.abspath(__file__))


def render(work, front, nodes, origin=None, conf="nginx.conf"):
    """Writes `work`/nginx/nginx.conf from deploy/`conf`: nginx on 127.0.0.1:`front` before the
    node ports `nodes`, with `origin` = (port, folder) served beside it when given. Returns the
    file's path."""
    os.makedirs(f"{work}/nginx/tmp", exist_ok=True)
    os.makedirs(f"{work}/nginx/cache", exist_ok=True)
    text = open(f"{DEPLOY}/{conf}").read()
    lines = "".join(f"        server 127.0.0.1:{port} max_fails=1 fail_timeout=10s;\n" for port in nodes)
    text = re.sub(r"( *# nodes\n).*?( *# end nodes\n)", lambda m: m.group(1) + lines + m.group(2), text, flags=re.S)
    # nginx only switches user when it runs as root; the files are then made theirs.
    if os.getuid() == 0:
        os.system(f"chown -R www-data '{work}/nginx'")
    else:
        text = text.replace("user www-data;\n", "")
    for old, new in [
        ("/run/nginx-imago.pid", f"{work}/nginx/nginx.pid"),
        ("/var/log/nginx/imago-error.log", f"{work}/nginx/error.log"),
        ("/var/log/nginx/imago-access.log", f"{work}/nginx/access.log"),
        ("/var/cache/nginx/imago", f"{work}/nginx/cache"),
        ("listen 80;", f"listen 127.0.0.1:{front};"),
        ("worker_processes auto;", "worker_processes 2;"),
    ]:
        text = text.replace(old, new)
    extra = f"""
    client_body_temp_path {work}/nginx/tmp/body;
    proxy_temp_path {work}/nginx/tmp/proxy;
    fastcgi_temp_path {work}/nginx/tmp/fastcgi;
    uwsgi_temp_path {work}/nginx/tmp/uwsgi;
    scgi_temp_path {work}/nginx/tmp/scgi;
"""
    if origin:
        port, root = origin
        extra += f"""
    # The sources' origin, fresh for an hour.
    server {{
        listen 127.0.0.1:{port};
        root {root};
        expires 1h;
        access_log {work}/nginx/origin.log imago;
    }}
"""
    # Temporary files and the origin go inside http { }, which is the file's last block.
    end = text.rstrip().rfind("}")
    path = f"{work}/nginx/nginx.conf"
    with open(path, "w") as file:
        file.write(text[:end] + extra.lstrip("\n") + "}\n")
    return path


if __name__ == "__main__":
    if len(sys.argv) not in (4, 6):
        sys.exit(__doc__)
    work, front, nodes = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    origin = (sys.argv[4], sys.argv[5]) if len(sys.argv) == 6 else None
    print(render(work, front, nodes, origin, os.environ.get("NGINX_CONF", "nginx.conf")))
