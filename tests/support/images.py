"""Small whole images of each raster type the favicon route serves, made byte by byte."""

from __future__ import annotations

import base64
import struct
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_chunk(kind: bytes, data: bytes) -> bytes:
    """Return one PNG chunk: its length, type, data and CRC."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int = 16, height: int = 16, *, interlace: int = 0) -> bytes:
    """Return a whole RGBA PNG of one colour (non-interlaced rows, or Adam7's passes)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, interlace)
    if interlace:
        passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4)]
        passes += [(1, 0, 2, 2), (0, 1, 1, 2)]
        raw = b""
        for x0, y0, dx, dy in passes:
            cols = (width - x0 + dx - 1) // dx if width > x0 else 0
            rows = (height - y0 + dy - 1) // dy if height > y0 else 0
            if cols and rows:
                raw += (b"\x00" + b"\x1a\x73\xe8\xff" * cols) * rows
    else:
        raw = (b"\x00" + b"\x1a\x73\xe8\xff" * width) * height
    return (
        PNG_SIGNATURE
        + png_chunk(b"IHDR", header)
        + png_chunk(b"IDAT", zlib.compress(raw))
        + png_chunk(b"IEND", b"")
    )


def ico(*images: bytes) -> bytes:
    """Return an ICO whose directory lists `images` (PNG or bitmap bodies)."""
    start = 6 + 16 * len(images)
    directory, offset = b"", start
    for image in images:
        directory += struct.pack("<BBBBHHII", 16, 16, 0, 0, 1, 32, len(image), offset)
        offset += len(image)
    return struct.pack("<HHH", 0, 1, len(images)) + directory + b"".join(images)


def bitmap(width: int = 16, height: int = 16) -> bytes:
    """Return an icon's 32-bit bitmap: its header (height doubled for the mask), pixels, mask."""
    header = struct.pack("<IiiHHIIiiII", 40, width, height * 2, 1, 32, 0, 0, 0, 0, 0, 0)
    mask_row = ((width + 31) // 32) * 4
    return header + b"\x1a\x73\xe8\xff" * width * height + b"\x00" * mask_row * height


# The well-known transparent 1x1 GIF, and a lossless 1x1 WebP.
GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==")
WEBP = base64.b64decode("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")


def jpeg() -> bytes:
    """Return a baseline JPEG's structure: tables, a 1x1 frame, one scan, its end."""
    quant = b"\xff\xdb" + struct.pack(">H", 67) + b"\x00" + b"\x01" * 64
    frame = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, 1, 1, 1) + b"\x01\x11\x00"
    table = b"\xff\xc4" + struct.pack(">H", 20) + b"\x00" + b"\x01" + b"\x00" * 15 + b"\x00"
    scan = b"\xff\xda" + struct.pack(">HB", 8, 1) + b"\x01\x00" + b"\x00\x3f\x00"
    return b"\xff\xd8" + quant + frame + table + scan + b"\x00\xff\x00\x3f" + b"\xff\xd9"
