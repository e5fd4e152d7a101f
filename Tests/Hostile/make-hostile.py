#!/usr/bin/env python3
"""Writes the hostile files in this folder (stdlib only; `cwebp` for one lossless 1×1 bitstream).

Each file reproduces one finding of issue 12; HostileInputTests decodes every file here and
checks the result or the error. Run from this folder: python3 make-hostile.py
"""
import struct, subprocess, tempfile, os, zlib

def lzw_uncompressed(indices, min_code=2):
    """GIF LZW data that never grows the code width: a clear code before every two literals."""
    clear, eoi, width = 1 << min_code, (1 << min_code) + 1, min_code + 1
    codes = []
    for i, index in enumerate(indices):
        if i % 2 == 0:
            codes.append(clear)
        codes.append(index)
    codes.append(eoi)
    bits, nbits, out = 0, 0, bytearray()
    for code in codes:
        bits |= code << nbits
        nbits += width
        while nbits >= 8:
            out.append(bits & 0xFF); bits >>= 8; nbits -= 8
    if nbits:
        out.append(bits & 0xFF)
    blocks = bytearray([min_code])
    for start in range(0, len(out), 255):
        chunk = out[start:start + 255]
        blocks += bytes([len(chunk)]) + chunk
    return bytes(blocks + b"\x00")

def gif_header(width, height, colors=((0, 0, 0), (255, 0, 0))):
    # Global color table of 2 entries (size field 0).
    return b"GIF89a" + struct.pack("<HHBBB", width, height, 0x80, 0, 0) + b"".join(bytes(c) for c in colors)

def gce(disposal, delay=10):
    return b"\x21\xF9\x04" + bytes([disposal << 2]) + struct.pack("<H", delay) + b"\x00\x00"

def descriptor(x, y, w, h):
    return b"\x2C" + struct.pack("<HHHHB", x, y, w, h, 0)

def frame(x, y, w, h, disposal=1, index=1):
    return gce(disposal) + descriptor(x, y, w, h) + lzw_uncompressed([index] * (w * h))

def write(name, data):
    with open(name, "wb") as f:
        f.write(data)
    print(f"{name}: {len(data)} bytes")

# 1. A frame at (50,50) on a 10×10 canvas with disposal 2 (restore to background), then another frame.
write("gif-frame-outside-canvas.gif", gif_header(10, 10) + frame(50, 50, 2, 2, disposal=2) + frame(0, 0, 1, 1) + b"\x3B")
# 2. Cut right after the first image descriptor: giflib's error code is 0 there.
write("gif-cut-after-descriptor.gif", gif_header(10, 10) + gce(1) + descriptor(0, 0, 10, 10))
# 8. A 10000×10000 canvas and five 1×1 frames.
write("gif-huge-canvas-five-frames.gif", gif_header(10000, 10000) + b"".join(frame(i, i, 1, 1) for i in range(5)) + b"\x3B")
# 8. 707×707 and 1000 frames of 1×1: 500 megapixels of composited frames from 23 KB.
write("gif-thousand-frames.gif", gif_header(707, 707) + b"".join(frame(i % 707, 0, 1, 1) for i in range(1000)) + b"\x3B")

def chunk(tag, payload):
    data = tag + struct.pack("<I", len(payload)) + payload
    return data + (b"\x00" if len(payload) % 2 else b"")

def vp8l_1x1():
    """A lossless 1×1 red pixel from cwebp, as its bare VP8L chunk."""
    with tempfile.TemporaryDirectory() as d:
        png = os.path.join(d, "p.png")
        raw = b"\x00\xff\x00\x00\xff"
        body = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
        def pchunk(t, p): return struct.pack(">I", len(p)) + t + p + struct.pack(">I", zlib.crc32(t + p))
        with open(png, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + pchunk(b"IHDR", body) + pchunk(b"IDAT", zlib.compress(raw)) + pchunk(b"IEND", b""))
        out = os.path.join(d, "p.webp")
        subprocess.run(["cwebp", "-quiet", "-lossless", png, "-o", out], check=True)
        data = open(out, "rb").read()
    assert data[12:16] == b"VP8L", data[12:16]
    return data[12:]  # the VP8L chunk, header included

def animated_webp(width, height, frames):
    """VP8X (animation) + ANIM + one ANMF per (x, y, duration) holding a 1×1 lossless frame."""
    bitstream = vp8l_1x1()
    vp8x = struct.pack("<B3x", 0x02) + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    body = b"WEBP" + chunk(b"VP8X", vp8x) + chunk(b"ANIM", struct.pack("<IH", 0, 0))
    for x, y, duration in frames:
        header = (x // 2).to_bytes(3, "little") + (y // 2).to_bytes(3, "little") + (0).to_bytes(3, "little") \
            + (0).to_bytes(3, "little") + duration.to_bytes(3, "little") + b"\x00"
        body += chunk(b"ANMF", header + bitstream)
    return b"RIFF" + struct.pack("<I", len(body)) + body

# 3. 130 frames of 16,777,215 ms: the timestamps pass Int32.
write("webp-timestamps-past-int32.webp", animated_webp(1, 1, [(0, 0, 0xFFFFFF)] * 130))
# 8. A 10000×10000 canvas and five 1×1 frames.
write("webp-huge-canvas-five-frames.webp", animated_webp(10000, 10000, [(2 * i, 2 * i, 100) for i in range(5)]))

def truncated_huge_jpeg():
    """A 64×64 baseline JPEG from cjpeg whose frame header is patched to 10000×10000: about 2 KB
    of entropy data for 100 megapixels, which libjpeg-turbo decodes with a warning and gray."""
    with tempfile.TemporaryDirectory() as d:
        ppm = os.path.join(d, "p.ppm")
        with open(ppm, "wb") as f:
            f.write(b"P6 64 64 255\n" + bytes((x * 4 + y) % 256 for y in range(64) for x in range(64) for _ in range(3)))
        data = bytearray(subprocess.run(["cjpeg", "-quality", "90", ppm], check=True, capture_output=True).stdout)
    sof = data.index(b"\xFF\xC0")
    data[sof + 5:sof + 9] = struct.pack(">HH", 10000, 10000)
    return bytes(data)

# 8. 10000×10000 declared, ~2 KB of data.
write("jpeg-truncated-10000x10000.jpeg", truncated_huge_jpeg())
