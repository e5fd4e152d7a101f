"""Two `imago serve` builds side by side: the one a change started from (BASE) and the change
(HEAD), on serve_bench.py's work, in alternating rounds on a quiet machine. A change to the server,
the pipeline, a codec or memory handling is measured this way before it lands: no row may be more
than 10% worse.

Rows: cold (100 distinct 2 MP JPEG sources → fit 512, JPEG and WebP q80, 2 clients, each server
fresh per round), hot (one kept variant, wrk 2 and 32 connections), thumbor's dialect cold.

Usage: python serve_ab.py BASE_IMAGO HEAD_IMAGO   (the bench venv's python: Pillow)
"""

import http.client
import os
import sys

import serve_bench as bench

ROUNDS = int(os.environ.get("SERVE_AB_ROUNDS", "3"))
# SERVE_AB_ONLY=options: only the option-set rows (both dialects).
ONLY = os.environ.get("SERVE_AB_ONLY", "")


def median(values):
    return sorted(values)[len(values) // 2]


def main():
    base, head = sys.argv[1], sys.argv[2]
    folder, origin = bench.origin_with_sources("imago-serve-ab-")
    try:
        print(f"serve A/B: base {base}\n           head {head}\n{bench.SOURCES} sources of 1800×1100 on a local nginx origin, {ROUNDS} alternating rounds, medians\n", flush=True)
        rows = []
        for extension in ("jpg", "webp") if ONLY in ("", "cold") else ():
            rates = {"base": [], "head": []}
            for _ in range(ROUNDS):
                for name, binary in (("base", base), ("head", head)):
                    server = bench.start_imago(binary, folder)
                    try:
                        rates[name].append(bench.cold(server, [bench.imago_path(origin, i, extension) for i in range(bench.SOURCES)])[0])
                    finally:
                        server.stop()
            rows.append((f"cold → {extension.upper()} fit {bench.BOX}, req/s", rates))
        # serve_bench's twelve option sets in turn, in both dialects.
        bench.Image.new("RGBA", (120, 60), (255, 255, 255, 160)).save(f"{folder}/origin/wm.png")
        for dialect, extra in (("imago", ()), ("thumbor", ("--dialect", "thumbor"))) if ONLY in ("", "options") else ():
            rates = {"base": [], "head": []}
            for _ in range(ROUNDS):
                for name, binary in (("base", base), ("head", head)):
                    server = bench.start_imago(binary, folder, extra=extra)
                    try:
                        rates[name].append(bench.cold(server, bench.option_paths(origin, dialect))[0])
                    finally:
                        server.stop()
            rows.append((f"cold, twelve option sets, {'imgproxy' if dialect == 'imago' else 'thumbor'} URLs, req/s", rates))
        hot = {key: {"base": [], "head": []} for key in (2, 32)}
        if ONLY not in ("", "hot"):
            return report(rows)
        servers = {name: bench.start_imago(binary, folder) for name, binary in (("base", base), ("head", head))}
        try:
            path = bench.imago_path(origin, 0, "webp")
            for server in servers.values():
                connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
                connection.request("GET", path)
                connection.getresponse().read()
            for _ in range(ROUNDS):
                for connections in (2, 32):
                    for name, server in servers.items():
                        hot[connections][name].append(bench.wrk(server.port, path, connections=connections))
        finally:
            for server in servers.values():
                server.stop()
        for connections in (2, 32):
            rows.append((f"hot, one kept variant, wrk {connections} connections, req/s", hot[connections]))
        report(rows)
    finally:
        bench.stop_nginx_and_remove(folder)


def report(rows):
    """The rows, each base's and head's median and their ratio, and the worst ratio."""
    if rows:
        print(f"{'row':<52} {'base':>10} {'head':>10} {'head/base':>10}")
        worst = 10.0
        for name, rates in rows:
            b, h = median(rates["base"]), median(rates["head"])
            worst = min(worst, h / b)
            print(f"{name:<52} {b:>10.1f} {h:>10.1f} {h / b:>9.2f}×   (base {' '.join(f'{r:.0f}' for r in rates['base'])}; head {' '.join(f'{r:.0f}' for r in rates['head'])})")
        print(f"\nworst row: {worst:.2f}× ({'within' if worst >= 0.9 else 'OVER'} the 10% bound)", flush=True)


if __name__ == "__main__":
    main()
