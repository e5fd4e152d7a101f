#!/usr/bin/env python3
"""libvips 8.18 with libultrahdr (PyPI's pyvips-binary) as the HDR gain-map reference for the tests.

  scene OUT.jpg W H [O]  an HDR scene (a gradient, a block at 4x SDR white in the right half's
                         upper part) saved by libultrahdr as Ultra HDR (uhdrsave, Q 90), its
                         EXIF orientation O (default 1)
  facts IN.jpg...        JSON, a line per file: the size and, when libvips finds one, the gain
                         map's size, bands and metadata
  hdr IN.jpg OUT.f32     the HDR rendition libvips reconstructs (uhdr2scRGB): little-endian
                         float32 RGB, row by row, 1.0 = SDR white; prints W H
  thumbnail IN OUT W H   libvips' own thumbnail (gain map kept), saved as Ultra HDR
"""
import json
import sys

import pyvips


def scene(path, width, height, orientation):
    xyz = pyvips.Image.xyz(width, height).cast("float")
    x, y = xyz[0], xyz[1]
    red = x / width * 0.8
    green = y / height * 0.8
    blue = x * 0 + 0.3
    image = red.bandjoin([green, blue])
    # A block at 4x SDR white: its SDR base clips to white, its gain map holds the boost.
    inside = (x >= width * 0.6) & (x < width * 0.8) & (y >= height * 0.3) & (y < height * 0.55)
    image = inside.ifthenelse([4.0, 4.0, 4.0], image)
    image = image.copy(interpretation="scrgb")
    image.set_type(pyvips.GValue.gint_type, "orientation", orientation)
    image.uhdrsave(path, Q=90)


def facts(path):
    image = pyvips.Image.new_from_file(path)
    result = {"width": image.width, "height": image.height, "gainMap": None}
    if image.get_typeof("gainmap-data") != 0:
        gain = pyvips.Image.new_from_buffer(image.get("gainmap-data"), "")
        result["gainMap"] = {
            "width": gain.width,
            "height": gain.height,
            "bands": gain.bands,
            "maxContentBoost": list(image.get("gainmap-max-content-boost")),
            "minContentBoost": list(image.get("gainmap-min-content-boost")),
            "gamma": list(image.get("gainmap-gamma")),
            "offsetSDR": list(image.get("gainmap-offset-sdr")),
            "offsetHDR": list(image.get("gainmap-offset-hdr")),
            "hdrCapacityMin": image.get("gainmap-hdr-capacity-min"),
            "hdrCapacityMax": image.get("gainmap-hdr-capacity-max"),
        }
    print(json.dumps(result))


def hdr(path, out):
    image = pyvips.Image.uhdrload(path).uhdr2scRGB().cast("float")
    with open(out, "wb") as file:
        file.write(image.write_to_memory())
    print(image.width, image.height)


def thumbnail(path, out, width, height):
    pyvips.Image.thumbnail(path, width, height=height).uhdrsave(out, Q=90)


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "scene":
        scene(arguments[0], int(arguments[1]), int(arguments[2]), int(arguments[3]) if len(arguments) > 3 else 1)
    elif command == "facts":
        for path in arguments:
            facts(path)
    elif command == "hdr":
        hdr(arguments[0], arguments[1])
    elif command == "thumbnail":
        thumbnail(arguments[0], arguments[1], int(arguments[2]), int(arguments[3]))
    else:
        sys.exit(f"unknown command {command}")
