"""Whether an icon's bytes are a whole image of the type their signature claims.

A body that starts like a PNG but is cut or corrupt would be served as `image/png` and show
as a broken image, so each type's structure is walked to its end first: PNG completely (every
chunk's CRC, the IHDR's values, the pixel data inflated to exactly the size the header
implies, each scanline's filter), ICO through its directory to each image inside (PNG as
above, or a bitmap big enough for its pixels), and GIF, JPEG and WebP block by block to their
last block. No pixel is drawn here; no image library is needed for a 16-pixel icon.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

# An icon larger than this is not one: it also bounds what inflating a PNG may allocate.
MAX_SIDE = 512

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Colour type: (channels, the bit depths allowed), from the PNG specification, section 11.2.2.
_PNG_COLOURS: dict[int, tuple[int, frozenset[int]]] = {
    0: (1, frozenset({1, 2, 4, 8, 16})),
    2: (3, frozenset({8, 16})),
    3: (1, frozenset({1, 2, 4, 8})),
    4: (2, frozenset({8, 16})),
    6: (4, frozenset({8, 16})),
}
# Adam7's seven passes: first column, first row, column step, row step.
_ADAM7: tuple[tuple[int, int, int, int], ...] = (
    (0, 0, 8, 8),
    (4, 0, 8, 8),
    (0, 4, 4, 8),
    (2, 0, 4, 4),
    (0, 2, 2, 4),
    (1, 0, 2, 2),
    (0, 1, 1, 2),
)


def _u32(body: bytes, at: int) -> int:
    return int.from_bytes(body[at : at + 4], "big")


def _le16(body: bytes, at: int) -> int:
    return int.from_bytes(body[at : at + 2], "little")


def _le32(body: bytes, at: int) -> int:
    return int.from_bytes(body[at : at + 4], "little")


def _scanlines(width: int, height: int, bits: int, interlaced: bool) -> list[tuple[int, int]]:
    """Return (rows, bytes per row with its filter byte) of each pass that has pixels."""
    passes = _ADAM7 if interlaced else ((0, 0, 1, 1),)
    lines = []
    for x0, y0, dx, dy in passes:
        cols = (width - x0 + dx - 1) // dx if width > x0 else 0
        rows = (height - y0 + dy - 1) // dy if height > y0 else 0
        if cols and rows:
            lines.append((rows, 1 + (cols * bits + 7) // 8))
    return lines


def _png_pixels(header: bytes, data: bytes) -> bool:
    width, height = _u32(header, 0), _u32(header, 4)
    depth, colour, method, filtering, interlace = header[8:13]
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
        return False
    if colour not in _PNG_COLOURS or depth not in _PNG_COLOURS[colour][1]:
        return False
    if method != 0 or filtering != 0 or interlace not in (0, 1):
        return False
    lines = _scanlines(width, height, depth * _PNG_COLOURS[colour][0], interlace == 1)
    expected = sum(rows * size for rows, size in lines)
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(data, expected + 1)
    except zlib.error:
        return False
    if len(raw) != expected or not inflater.eof:
        return False
    at = 0
    for rows, size in lines:
        for _ in range(rows):
            if raw[at] > 4:  # the five filter types, 0 to 4
                return False
            at += size
    return True


def whole_png(body: bytes) -> bool:
    """Tell whether `body` is a whole PNG: IHDR first, sound chunks, pixels, IEND last."""
    if not body.startswith(_PNG_SIGNATURE):
        return False
    at, header, palette, data = len(_PNG_SIGNATURE), b"", False, bytearray()
    while at + 12 <= len(body):
        length, kind = _u32(body, at), body[at + 4 : at + 8]
        end = at + 12 + length
        chunk = body[at + 8 : at + 8 + length]
        if end > len(body) or not kind.isalpha() or not kind.isascii():
            return False
        if zlib.crc32(kind + chunk) != _u32(body, end - 4):
            return False
        if (kind == b"IHDR") != (at == len(_PNG_SIGNATURE)):
            return False  # IHDR comes first, and only first
        if kind == b"IHDR":
            if length != 13:
                return False
            header = chunk
        elif kind == b"PLTE":
            palette = 0 < length <= 768 and length % 3 == 0
        elif kind == b"IDAT":
            data += chunk
        elif kind == b"IEND":
            needs_palette = header[9] == 3
            return (
                length == 0
                and end == len(body)
                and bool(data)
                and (palette or not needs_palette)
                and _png_pixels(header, bytes(data))
            )
        elif kind[:1].isupper():
            return False  # an unknown critical chunk: no decoder may skip it
        at = end
    return False


def _bitmap(body: bytes) -> bool:
    """Tell whether `body` is an icon's bitmap (a DIB header, then its pixels and mask)."""
    if len(body) < 40 or _le32(body, 0) not in (40, 108, 124):
        return False
    header = _le32(body, 0)
    width = int.from_bytes(body[4:8], "little", signed=True)
    height = int.from_bytes(body[8:12], "little", signed=True)  # the pixels and the mask
    planes, bits, compression = _le16(body, 12), _le16(body, 14), _le32(body, 16)
    if not (1 <= width <= 256 and 2 <= height <= 512 and height % 2 == 0 and planes == 1):
        return False
    if bits not in (1, 4, 8, 16, 24, 32) or compression not in (0, 3):
        return False
    rows = height // 2
    colours = _le32(body, 32) or (1 << bits if bits <= 8 else 0)
    if colours > 256:
        return False
    pixels = ((width * bits + 31) // 32) * 4 * rows
    return header + colours * 4 + pixels <= len(body)


def whole_ico(body: bytes) -> bool:
    """Tell whether `body` is a whole ICO: its directory, and every image it lists."""
    if len(body) < 6 or body[:4] != b"\x00\x00\x01\x00":
        return False
    count = _le16(body, 4)
    start = 6 + 16 * count
    if not 1 <= count <= 64 or start > len(body):
        return False
    for entry in range(6, start, 16):
        size, offset = _le32(body, entry + 8), _le32(body, entry + 12)
        if size == 0 or offset < start or offset + size > len(body):
            return False
        image = body[offset : offset + size]
        if not (whole_png(image) if image.startswith(_PNG_SIGNATURE) else _bitmap(image)):
            return False
    return True


def _sub_blocks(body: bytes, at: int) -> int | None:
    """Skip GIF data sub-blocks from `at`; return where the terminator ends, else None."""
    while at < len(body):
        size = body[at]
        at += 1 + size
        if size == 0:
            return at
    return None


def whole_gif(body: bytes) -> bool:
    """Tell whether `body` is a whole GIF: its screen, at least one image, then its trailer."""
    if len(body) < 13 or body[:6] not in (b"GIF87a", b"GIF89a"):
        return False
    if not (_le16(body, 6) and _le16(body, 8)):
        return False
    at, images = 13, 0
    if body[10] & 0x80:
        at += 3 << ((body[10] & 7) + 1)
    while at < len(body):
        block = body[at]
        if block == 0x3B:
            return images > 0
        if block == 0x21 and at + 2 <= len(body):
            found = _sub_blocks(body, at + 2)
        elif block == 0x2C and at + 11 <= len(body):
            if not (_le16(body, at + 5) and _le16(body, at + 7)):
                return False
            at += 10
            if body[at - 1] & 0x80:
                at += 3 << ((body[at - 1] & 7) + 1)
            if at >= len(body) or not 2 <= body[at] <= 8:  # the LZW code size
                return False
            found = _sub_blocks(body, at + 1)
            images += 1
        else:
            return False
        if found is None:
            return False
        at = found
    return False


_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def _entropy_end(body: bytes, at: int) -> int:
    """Return where the entropy-coded data from `at` ends: at the next marker's 0xFF."""
    while True:
        at = body.find(b"\xff", at)
        if at < 0 or at + 1 >= len(body):
            return len(body)
        following = body[at + 1]
        if following == 0 or 0xD0 <= following <= 0xD7 or following == 0xFF:
            at += 1  # a stuffed 0xFF, a restart marker, or fill
            continue
        return at


def whole_jpeg(body: bytes) -> bool:
    """Tell whether `body` is a whole JPEG: a frame header, a scan, and its end marker."""
    if not body.startswith(b"\xff\xd8"):
        return False
    at, frame, scanned = 2, False, False
    while at + 2 <= len(body):
        if body[at] != 0xFF:
            return False
        marker = body[at + 1]
        if marker == 0xFF:
            at += 1
            continue
        if marker == 0xD9:
            return frame and scanned
        if at + 4 > len(body):
            return False
        length = int.from_bytes(body[at + 2 : at + 4], "big")
        end = at + 2 + length
        if length < 2 or end > len(body):
            return False
        if marker in _SOF:
            components = body[at + 9] if length >= 8 else 0
            height = int.from_bytes(body[at + 5 : at + 7], "big")
            width = int.from_bytes(body[at + 7 : at + 9], "big")
            if not (1 <= components <= 4 and length == 8 + 3 * components and height and width):
                return False
            frame = True
        elif marker == 0xDA:
            if not frame:
                return False
            scanned = True
            end = _entropy_end(body, end)
        at = end
    return False


def whole_webp(body: bytes) -> bool:
    """Tell whether `body` is a whole WebP: a RIFF of sound chunks holding an image."""
    if len(body) < 20 or body[:4] != b"RIFF" or body[8:12] != b"WEBP":
        return False
    if _le32(body, 4) + 8 != len(body):
        return False
    at, extended, image = 12, False, False
    while at + 8 <= len(body):
        kind, size = body[at : at + 4], _le32(body, at + 4)
        chunk = body[at + 8 : at + 8 + size]
        if len(chunk) != size:
            return False
        if at == 12 and kind == b"VP8X":
            extended = size >= 10
            if not extended:
                return False
        elif kind == b"VP8 ":
            if size < 10 or chunk[3:6] != b"\x9d\x01\x2a":
                return False
            if not (_le16(chunk, 6) & 0x3FFF and _le16(chunk, 8) & 0x3FFF):
                return False
            image = True
        elif kind == b"VP8L":
            if size < 5 or chunk[0] != 0x2F:
                return False
            image = True
        elif kind == b"ANMF":
            image = extended
        elif at == 12:
            return False  # the first chunk is VP8, VP8L or VP8X
        at += 8 + size + (size & 1)
        if not extended and image:
            break
    return image and at >= len(body) - 1


_CHECKS: dict[str, Callable[[bytes], bool]] = {
    "image/png": whole_png,
    "image/x-icon": whole_ico,
    "image/gif": whole_gif,
    "image/jpeg": whole_jpeg,
    "image/webp": whole_webp,
}


def is_whole_image(kind: str, body: bytes) -> bool:
    """Tell whether `body` is a whole image of `kind` (as `sniff_image` names it)."""
    check = _CHECKS.get(kind)
    return check is not None and check(body)
