"""`imago placeholder` against the PyPI placeholder encoders, in one run.

    python placeholder_bench.py IMAGO_BINARY [FOLDER]

FOLDER (default: the ukui wallpapers in /usr/share/backgrounds) holds large JPEG photos. Imago
prints both hashes of every photo (a process started per round, its startup counted); each PyPI
encoder (`thumbhash-rs`, `blurhash-python` at 4x3) makes its one hash, in this process, fed by
Pillow's `draft` + `thumbnail` to 100 px as their documentation suggests. Median of 3 rounds.
"""
import glob, os, statistics, subprocess, sys, time

import blurhash
import thumbhash
from PIL import Image

binary = sys.argv[1]
folder = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/backgrounds"
files = sorted(glob.glob(os.path.join(folder, "*.jpg")))
if not files:
    sys.exit(f"no JPEG photos in {folder}")


def small(path):
    image = Image.open(path)
    image.draft("RGB", (100, 100))
    image = image.convert("RGB")
    image.thumbnail((100, 100))
    return image


def median_seconds(run):
    times = []
    for _ in range(3):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


imago = median_seconds(lambda: subprocess.run([binary, "placeholder", *files], check=True, stdout=subprocess.DEVNULL))
peers = {
    "thumbhash-rs": median_seconds(lambda: [thumbhash.rgba_to_thumb_hash(i.width, i.height, i.convert("RGBA").tobytes()) for i in map(small, files)]),
    "blurhash-python": median_seconds(lambda: [blurhash.encode(i, 4, 3) for i in map(small, files)]),
}
print(f"placeholders of {len(files)} photos in {folder}, median of 3 rounds")
print(f"  imago placeholder (ThumbHash and BlurHash 4x3, every core): {imago * 1000:.0f} ms ({imago / len(files) * 1000:.1f} ms a photo)")
for name, seconds in peers.items():
    print(f"  {name} (one hash, one core): {seconds * 1000:.0f} ms ({seconds / len(files) * 1000:.1f} ms a photo)")
fastest = min(peers, key=peers.get)
print(f"  ratio: {peers[fastest] / imago:.2f}x the fastest ({fastest})  target >= 3x  {'MET' if peers[fastest] / imago >= 3 else 'NOT MET'}")
