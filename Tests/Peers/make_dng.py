#!/usr/bin/env python3
"""DNG files for the camera RAW tests, written by PyPI's PiDNG (its RAW2DNG and tags).

  make_dng.py SOURCE OUT.dng W H [--orientation O] [--preview P.jpg PW PH]

SOURCE (any picture OpenCV reads) is resized to W x H, made linear from sRGB, and sampled into an
RGGB Bayer mosaic of 12-bit values, which PiDNG writes as an uncompressed DNG 1.4 (its lossless
JPEG writer fails on Python 3.10 and later) with an identity colour matrix, neutral white balance
and TIFF orientation O (default 1). --preview appends P.jpg as the file's second directory (IFD1, old-style JPEG
offsets), the way cameras carry a preview and exiftool shows it as ThumbnailImage; PiDNG writes
no preview of its own.
"""
import argparse
import struct

import cv2
import numpy as np
from pidng.core import RAW2DNG, DNGTags, Tag
from pidng.defs import CalibrationIlluminant, CFAPattern, PhotometricInterpretation

WHITE = 4095


def mosaic(source, width, height):
    picture = cv2.imread(source, cv2.IMREAD_COLOR)
    picture = cv2.resize(picture, (width, height), interpolation=cv2.INTER_AREA)
    rgb = picture[:, :, ::-1].astype(np.float64) / 255.0
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    values = np.round(linear * WHITE).astype(np.uint16)
    raw = np.zeros((height, width), dtype=np.uint16)
    raw[0::2, 0::2] = values[0::2, 0::2, 0]
    raw[0::2, 1::2] = values[0::2, 1::2, 1]
    raw[1::2, 0::2] = values[1::2, 0::2, 1]
    raw[1::2, 1::2] = values[1::2, 1::2, 2]
    return raw


def dng(raw, orientation):
    height, width = raw.shape
    tags = DNGTags()
    tags.set(Tag.ImageWidth, width)
    tags.set(Tag.ImageLength, height)
    tags.set(Tag.TileWidth, width)
    tags.set(Tag.TileLength, height)
    tags.set(Tag.Orientation, orientation)
    tags.set(Tag.PhotometricInterpretation, PhotometricInterpretation.Color_Filter_Array)
    tags.set(Tag.SamplesPerPixel, 1)
    tags.set(Tag.BitsPerSample, 16)
    tags.set(Tag.CFARepeatPatternDim, [2, 2])
    tags.set(Tag.CFAPattern, CFAPattern.RGGB)
    tags.set(Tag.BlackLevel, 0)
    tags.set(Tag.WhiteLevel, WHITE)
    tags.set(Tag.ColorMatrix1, [[1, 1], [0, 1], [0, 1], [0, 1], [1, 1], [0, 1], [0, 1], [0, 1], [1, 1]])
    tags.set(Tag.CalibrationIlluminant1, CalibrationIlluminant.D65)
    tags.set(Tag.AsShotNeutral, [[1, 1], [1, 1], [1, 1]])
    tags.set(Tag.BaselineExposure, [[0, 1]])
    tags.set(Tag.Make, "Imago")
    tags.set(Tag.Model, "Test Mosaic")
    writer = RAW2DNG()
    writer.options(tags, path="", compress=False)
    return bytes(writer.convert(raw))


def append_preview(data, jpeg, width, height):
    """The DNG with `jpeg` as IFD1: NewSubfileType 1, old-style JPEG (compression 6) at an offset."""
    assert data[:4] == b"II*\0"
    first = struct.unpack_from("<I", data, 4)[0]
    count = struct.unpack_from("<H", data, first)[0]
    link = first + 2 + 12 * count
    assert struct.unpack_from("<I", data, link)[0] == 0
    out = bytearray(data)
    out += b"\0" * (len(out) % 2)
    at = len(out)
    out += jpeg
    out += b"\0" * (len(out) % 2)
    directory = len(out)
    entries = [(254, 4, 1), (256, 4, width), (257, 4, height), (259, 3, 6), (513, 4, at), (514, 4, len(jpeg))]
    out += struct.pack("<H", len(entries))
    for tag, kind, value in entries:
        out += struct.pack("<HHII", tag, kind, 1, value) if kind == 4 else struct.pack("<HHIHH", tag, kind, 1, value, 0)
    out += struct.pack("<I", 0)
    struct.pack_into("<I", out, link, directory)
    return bytes(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source")
    parser.add_argument("out")
    parser.add_argument("width", type=int)
    parser.add_argument("height", type=int)
    parser.add_argument("--orientation", type=int, default=1)
    parser.add_argument("--preview", nargs=3, metavar=("JPEG", "W", "H"))
    arguments = parser.parse_args()
    data = dng(mosaic(arguments.source, arguments.width, arguments.height), arguments.orientation)
    if arguments.preview:
        path, width, height = arguments.preview
        with open(path, "rb") as file:
            data = append_preview(data, file.read(), int(width), int(height))
    with open(arguments.out, "wb") as file:
        file.write(data)


if __name__ == "__main__":
    main()
