"""What OpenTelemetry costs `imago serve` on its hottest path: one kept variant under wrk at 2 and 32
connections, the same build with `--open-telemetry` (a span per request, exported over OTLP/HTTP in
batches to a local receiver that answers each export unread) and without, in alternating rounds.

Usage: python tracing_cost.py IMAGO   (the bench venv's python; the peers' venv runs the receiver)
"""

import json
import os
import subprocess
import sys

import serve_bench as bench

ROUNDS = int(os.environ.get("TRACING_ROUNDS", "3"))
PEERS_PYTHON = os.path.join(os.path.dirname(__file__), "..", ".venv-peers", "bin", "python")
RECEIVER = os.path.join(os.path.dirname(__file__), "..", "Tests", "Peers", "otlp_receiver.py")


def main():
    binary = sys.argv[1]
    folder, origin = bench.origin_with_sources("imago-tracing-")
    receiver = subprocess.Popen([PEERS_PYTHON, RECEIVER, "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port = json.loads(receiver.stdout.readline())["port"]
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{port}"
        servers = {"off": bench.start_imago(binary, folder), "on": bench.start_imago(binary, folder, extra=("--open-telemetry=true",))}
        rates = {connections: {"off": [], "on": []} for connections in (2, 32)}
        try:
            path = bench.imago_path(origin, 0, "webp")
            for server in servers.values():
                bench.fetch(server.port, path)
            for _ in range(ROUNDS):
                for connections in (2, 32):
                    for name, server in servers.items():
                        rates[connections][name].append(bench.wrk(server.port, path, connections=connections))
        finally:
            for server in servers.values():
                server.stop()
        print(f"tracing cost: {binary}, one kept variant, {ROUNDS} alternating rounds, medians")
        for connections in (2, 32):
            off, on = (sorted(rates[connections][name])[ROUNDS // 2] for name in ("off", "on"))
            print(f"hot, wrk {connections} connections: off {off:,.0f} req/s, on {on:,.0f} req/s, on/off {on / off:.2f}×")
    finally:
        receiver.stdin.close()
        receiver.wait()
        bench.stop_nginx_and_remove(folder)


if __name__ == "__main__":
    main()
