#!/usr/bin/env python3
"""The HDR benchmark's files and its libvips side (pyvips-binary: libvips 8.18 with libultrahdr).

  make OUT_DIR PHOTO...   each photo made HDR (its highlights, linear light above 0.5, raised up
                          to 4x SDR white) and saved by libultrahdr as Ultra HDR with a gain map at
                          1/4 a side, as Android phones write it: NAME-uhdr.jpg; and the same file
                          cut before its gain map (the same base bytes, no gain map): NAME-base.jpg
  time ROUNDS WIDTH FILE...  libvips' thumbnail of each file to WIDTH (gain map kept) written as
                          JPEG q80 in memory, one at a time on one thread; prints the median
                          seconds of ROUNDS for each file, one per line
"""
import os
import sys
import time

os.environ.setdefault("VIPS_CONCURRENCY", "1")
import pyvips  # noqa: E402

pyvips.cache_set_max(0)


def make(out, photos):
    for photo in photos:
        name = os.path.splitext(os.path.basename(photo))[0]
        linear = pyvips.Image.new_from_file(photo).colourspace("scrgb")
        luminance = linear[0] * 0.2126 + linear[1] * 0.7152 + linear[2] * 0.0722
        boost = (luminance > 0.5).ifthenelse(1 + (luminance - 0.5) * 6, 1)
        hdr = (linear * boost).copy(interpretation="scrgb")
        path = os.path.join(out, name + "-uhdr.jpg")
        hdr.uhdrsave(path, Q=90, gainmap_scale_factor=4)
        data = open(path, "rb").read()
        # The gain map's JPEG is the last SOI in the file: the primary's bytes end before it.
        open(os.path.join(out, name + "-base.jpg"), "wb").write(data[: data.rfind(b"\xff\xd8\xff")])


def timed(rounds, width, files):
    for path in files:
        seconds = []
        for _ in range(rounds):
            start = time.perf_counter()
            pyvips.Image.thumbnail(path, width).write_to_buffer(".jpg", Q=80)
            seconds.append(time.perf_counter() - start)
        print(sorted(seconds)[rounds // 2])


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3:])
    else:
        timed(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
