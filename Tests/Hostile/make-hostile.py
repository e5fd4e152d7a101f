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
    return packed_image_data([(code, width) for code in codes], min_code)

def packed_image_data(codes, min_code):
    """(code, width) pairs packed LSB first, behind the minimum code size, in sub-blocks."""
    bits, nbits, out = 0, 0, bytearray()
    for code, width in codes:
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

def lzw_full_table(indices, min_code=8):
    """Plain LZW that fills the code table to its last code, 4095, and then keeps emitting 12-bit
    codes without a clear code (the 'deferred clear' the GIF spec allows)."""
    clear, eoi = 1 << min_code, (1 << min_code) + 1
    table = {(i,): i for i in range(clear)}
    next_code, width = eoi + 1, min_code + 1
    codes = [(clear, width)]
    current = (indices[0],)
    for k in indices[1:]:
        extended = current + (k,)
        if extended in table:
            current = extended
            continue
        codes.append((table[current], width))
        if next_code < 4096:
            table[extended] = next_code
            next_code += 1
            # The decoder, one entry behind, widens when its next code passes the width.
            if next_code > (1 << width) and width < 12:
                width += 1
        current = (k,)
    codes.append((table[current], width))
    codes.append((eoi, width))
    return packed_image_data(codes, min_code), next_code

def gif_4096_codes():
    import random
    rng = random.Random(4096)
    width = height = 96
    indices = [rng.randrange(256) for _ in range(width * height)]
    data, used = lzw_full_table(indices)
    assert used == 4096, used
    palette = b"".join(bytes((i, 255 - i, (i * 7) % 256)) for i in range(256))
    header = b"GIF89a" + struct.pack("<HHBBB", width, height, 0xF7, 0, 0) + palette
    return header + descriptor(0, 0, width, height) + data + b"\x3B"

# 14. Every LZW code up to 4095 used, clear deferred: a valid GIF giflib and Pillow decode.
write("gif-4096-codes.gif", gif_4096_codes())

def jpeg_with_marker_0x80():
    """The corpus photo with FF 80, not a valid marker, in the middle of its entropy-coded data:
    djpeg refuses it."""
    data = bytearray(open("../../../shared/corpus/jpeg/video-001.jpeg", "rb").read())
    sos = data.index(b"\xFF\xDA")
    start = sos + 2 + struct.unpack(">H", data[sos + 2:sos + 4])[0]
    middle = start + (len(data) - start) // 2
    return bytes(data[:middle] + b"\xFF\x80" + data[middle:])

# 14. An invalid marker inside the scan.
write("jpeg-marker-0x80-in-scan.jpeg", jpeg_with_marker_0x80())

def cmyk_without_adobe():
    """The corpus CMYK photo with its Adobe APP14 segment removed: libjpeg-based viewers still
    read its CMYK as inverted (as Photoshop writes it)."""
    data = bytearray(open("../../../shared/corpus/jpeg/video-001.cmyk.jpeg", "rb").read())
    adobe = data.index(b"\xFF\xEE")
    length = struct.unpack(">H", data[adobe + 2:adobe + 4])[0]
    assert data[adobe + 4:adobe + 9] == b"Adobe"
    return bytes(data[:adobe] + data[adobe + 2 + length:])

# 14. CMYK with no Adobe marker.
write("jpeg-cmyk-without-adobe.jpeg", cmyk_without_adobe())

def png_zero_bomb(width=8000, height=8000):
    """A gray PNG of zeros: 64 megapixels (256 MB as RGBA) in about 60 KB of deflate."""
    row = b"\x00" + bytes(width)
    compressor = zlib.compressobj(9)
    body = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    def c(tag, payload): return struct.pack(">I", len(payload)) + tag + payload + struct.pack(">I", zlib.crc32(tag + payload))
    return b"\x89PNG\r\n\x1a\n" + c(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)) + c(b"IDAT", body) + c(b"IEND", b"")

# 8. Within the limits but large: what a decode of a small file may legitimately cost.
write("png-64mp-zeros.png", png_zero_bomb())

# 9. Videos (issue 62), from a 64×48 clip Debian's ffmpeg writes: damaged where FFmpeg's demuxers
# and decoders read first. Deterministic: the same bytes on every run of the same ffmpeg.
def ffmpeg_clip(options, suffix):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "clip" + suffix)
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10:duration=2",
                        "-fflags", "+bitexact", "-flags:v", "+bitexact"] + options + [path], check=True)
        return open(path, "rb").read()

def box_offset(data, kind):
    """Where the first box of `kind` (4 ASCII letters) starts its size field."""
    return data.index(kind) - 4

def flipped(data, every, start):
    """Every `every`-th byte from `start` inverted: damage spread over the whole file."""
    out = bytearray(data)
    for index in range(start, len(out), every):
        out[index] ^= 0xFF
    return bytes(out)

h264 = ffmpeg_clip(["-c:v", "libx264", "-g", "5", "-pix_fmt", "yuv420p"], ".mp4")
# The movie box comes last in a plain MP4: cut before it, the file has no index at all.
write("video-mp4-cut-before-moov.mp4", h264[:box_offset(h264, b"moov")])
# The sample entry claims 65535×65535 pixels (the SPS inside still says 64×48): refused by the
# declared size before any frame is decoded.
entry = h264.index(b"avc1") + 4 + 6 + 2 + 16
write("video-mp4-claims-65535-square.mp4", h264[:entry] + struct.pack(">HH", 65535, 65535) + h264[entry + 4:])
hevc = ffmpeg_clip(["-c:v", "libx265", "-x265-params", "log-level=none", "-g", "5"], ".mkv")
write("video-mkv-hevc-bitflipped.mkv", flipped(hevc, 97, 200))
vp9 = ffmpeg_clip(["-c:v", "libvpx-vp9", "-g", "5", "-b:v", "50k"], ".webm")
write("video-webm-vp9-cut-in-half.webm", vp9[:len(vp9) // 2])
avi = ffmpeg_clip(["-c:v", "mpeg4", "-g", "5"], ".avi")
# The RIFF and list sizes claim 2 GB more than the file holds.
write("video-avi-sizes-past-the-end.avi", avi[:4] + struct.pack("<I", 0x7FFFFFF0) + avi[8:])

# 10. Camera RAW (issue 62), from the DNGs PiDNG wrote for the fuzz seeds (Tests/Peers/make_dng.py):
# damaged where LibRaw's parser and unpacker read.
def tiff_entry(data, tag):
    """Where IFD0's entry for `tag` starts (a little-endian TIFF)."""
    first = struct.unpack_from("<I", data, 4)[0]
    for index in range(struct.unpack_from("<H", data, first)[0]):
        at = first + 2 + 12 * index
        if struct.unpack_from("<H", data, at)[0] == tag:
            return at
    raise KeyError(tag)

dng = open("../../Fuzz/seeds/raw/mosaic.dng", "rb").read()
write("raw-dng-cut-in-half.dng", dng[:len(dng) // 2])
# Width and length claim 65535 (the strip holds 48×32): LibRaw's open refuses it (the pixel limit
# would next, before anything is unpacked).
claimed = bytearray(dng)
for tag in (256, 257):
    at = tiff_entry(dng, tag)
    struct.pack_into("<HHII", claimed, at, tag, 4, 1, 65535)
write("raw-dng-claims-65535-square.dng", bytes(claimed))
write("raw-dng-bitflipped.dng", flipped(dng, 97, 100))
previewed = open("../../Fuzz/seeds/raw/preview-turned.dng", "rb").read()
# The preview's length (IFD1's tag 514) claims 16 MB more than the file holds.
at = previewed.rindex(struct.pack("<HHI", 514, 4, 1))
write("raw-dng-preview-past-the-end.dng", previewed[:at + 8] + struct.pack("<I", 1 << 24) + previewed[at + 12:])

def pdf(objects, page_count_claim=None):
    """A PDF of `objects` (object 1 the catalog), its cross-reference table counted here."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)

def pdf_page(media_box=b"[0 0 200 150]", content=b"0.2 0.4 0.8 rg 20 20 160 110 re f", resources=b"<< >>", extra=()):
    stream = b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"
    return pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox " + media_box + b" /Resources " + resources + b" /Contents 4 0 R >>",
        stream,
    ] + list(extra))

page = pdf_page()
write("pdf-cut-in-half.pdf", page[:len(page) // 2])
write("pdf-bitflipped.pdf", flipped(page, 23, 40))
# A page of 14400 × 14400 points (PDF's largest): 207 megapixels at 72 dpi, refused before Poppler renders it.
write("pdf-page-14400-square.pdf", pdf_page(media_box=b"[0 0 14400 14400]"))
# A page that draws a 40000 × 40000 RGB image (4.8 GB of samples) from a few kilobytes: zeros
# compressed twice by Flate. Poppler inflates and scales every row: stopped at the deadline.
inner = zlib.compressobj(9)
chunk, rows = bytes(40000 * 3 * 64), 40000 // 64
once = b"".join(inner.compress(chunk) for _ in range(rows)) + inner.flush()
twice = zlib.compress(once, 9)
image = b"<< /Type /XObject /Subtype /Image /Width 40000 /Height 40000 /ColorSpace /DeviceRGB /BitsPerComponent 8 " \
    b"/Filter [/FlateDecode /FlateDecode] /Length %d >>\nstream\n" % len(twice) + twice + b"\nendstream"
write("pdf-image-bomb.pdf", pdf_page(content=b"q 200 0 0 150 0 0 cm /Im0 Do Q", resources=b"<< /XObject << /Im0 5 0 R >> >>", extra=[image]))
