"""Result storage (issue 61): what a node pays to answer a variant another node made, read from the
shared store (`--result-storage file://…`), beside a hit on its own disk and a cold make, and beside
thumbor 7.8's file result storage hit (thumbor restarted on the results it stored).

Each round: 100 distinct ~2 MP JPEG sources (serve_bench's), each fit in 512, 384, 256 and 128 px
boxes as WebP (400 variants), two clients on
keep-alive connections, every path once against a fresh process: (1) Imago cold, writing the store
and its disk; (2) Imago restarted on that disk only (memory empty): disk hits; (3) a new Imago with
no disk on that store: shared-store hits; (4) thumbor cold with its file result storage; (5) thumbor
restarted on those results: result-storage hits. Three rounds; the median round is printed.

Usage: python store_bench.py IMAGO_BINARY   (the bench venv's python: Pillow and thumbor)
"""

import sys

import serve_bench as sb

ROUNDS = 3
BOXES = (512, 384, 256, 128)


def main():
    binary = sys.argv[1]
    folder, origin = sb.origin_with_sources("imago-store-bench.")
    arms = {name: [] for name in ("imago cold make", "imago local-disk hit", "imago shared-store hit", "thumbor cold make", "thumbor result-storage hit")}
    # Four boxes of each source: 400 variants, so that a round of hits lasts long enough to time.
    imago_paths = [
        f"/insecure/rs:fit:{box}:{box}/plain/http%3A%2F%2F127.0.0.1%3A{origin}%2Fsrc-{index:03d}.jpg@webp" for box in BOXES for index in range(sb.SOURCES)
    ]
    thumbor_paths = [
        f"/unsafe/fit-in/{box}x{box}/filters:format(webp)/127.0.0.1:{origin}/src-{index:03d}.jpg" for box in BOXES for index in range(sb.SOURCES)
    ]
    try:
        for round in range(ROUNDS):
            store, cache = f"{folder}/store-{round}", f"{folder}/cache-{round}"

            def measure(name, server, paths):
                try:
                    arms[name].append(sb.cold(server, paths))
                finally:
                    server.stop()

            measure("imago cold make", sb.start_imago(binary, folder, ["--result-storage", "file://" + store, "--cache-dir", cache]), imago_paths)
            measure("imago local-disk hit", sb.start_imago(binary, folder, ["--cache-dir", cache]), imago_paths)
            measure("imago shared-store hit", sb.start_imago(binary, folder, ["--result-storage", "file://" + store]), imago_paths)
            results = [f"RESULT_STORAGE_FILE_STORAGE_ROOT_PATH = '{folder}/thumbor-results-{round}'", "RESULT_STORAGE_STORES_UNSAFE = True"]
            measure("thumbor cold make", sb.start_thumbor(folder, result_storage=True, extra_conf=results), thumbor_paths)
            measure("thumbor result-storage hit", sb.start_thumbor(folder, result_storage=True, extra_conf=results), thumbor_paths)
            print(f"round {round + 1}: " + ", ".join(f"{name} {arms[name][-1][0]:.1f}/s" for name in arms), flush=True)
    finally:
        sb.stop_nginx_and_remove(folder)

    def median(name):
        rates = sorted(arms[name], key=lambda arm: arm[0])
        return rates[len(rates) // 2]

    print(f"\n| arm ({len(imago_paths)} distinct variants, {sb.CLIENTS} clients, median of {ROUNDS} rounds) | requests/s | p50 ms | p99 ms |")
    print("| --- | --- | --- | --- |")
    for name in arms:
        rate, p50, p99 = median(name)
        print(f"| {name} | {rate:.1f} | {p50:.1f} | {p99:.1f} |")
    shared, disk, make = median("imago shared-store hit")[0], median("imago local-disk hit")[0], median("imago cold make")[0]
    peer = median("thumbor result-storage hit")[0]
    print(f"\nshared-store hit / cold make: {shared / make:.1f}×; shared-store hit / local-disk hit: {shared / disk:.2f}×; "
          f"Imago's shared-store hit / thumbor's result-storage hit: {shared / peer:.2f}×")
    print("all rates: " + "; ".join(f"{name}: " + ", ".join(f"{arm[0]:.1f}" for arm in arms[name]) for name in arms))


if __name__ == "__main__":
    main()
