"""The site's icon as the PNG the pages name, drawn from templates/icon.svg.

Why not the SVG itself: on every change of the address (each tap writes the figure's state
into the URL) Chromium, in a private window and under Playwright, downloads the page's icon
again and decodes it on the page's main thread. An SVG icon is a whole SVG document to build
each time (about 5 ms of each tap, traced in `make bench`'s Chromium); a 32-pixel PNG is
almost nothing. The SVG stays the one drawing: a few rectangles (x, y, width, height, rx,
fill), which this module rasterises with 4 x 4 samples per pixel and writes as an RGBA PNG
with the standard library (zlib and a CRC per chunk are all the format needs).
"""

import functools
import struct
import xml.etree.ElementTree as ET
import zlib

SVG = "{http://www.w3.org/2000/svg}"
SIZE = 32
SAMPLES = 4  # per pixel and axis


def rects(svg_text):
    """[(x, y, w, h, rx, (r, g, b))] of the icon's rectangles, in viewBox units, and the
    viewBox's width. Anything but plain rectangles filled with #rrggbb is an error."""
    root = ET.fromstring(svg_text)
    _, _, width, height = (float(v) for v in root.get("viewBox").split())
    if width != height:
        raise ValueError(f"the icon's viewBox must be square, not {width} x {height}")
    out = []
    for el in root:
        fill = el.get("fill", "")
        if el.tag != SVG + "rect" or len(fill) != 7 or not fill.startswith("#"):
            raise ValueError(f"the icon may hold only <rect fill=#rrggbb>, not {ET.tostring(el)!r}")
        x, y, w, h, rx = (float(el.get(k, 0)) for k in ("x", "y", "width", "height", "rx"))
        out.append((x, y, w, h, rx, tuple(int(fill[i : i + 2], 16) for i in (1, 3, 5))))
    return out, width


def _inside(px, py, x, y, w, h, rx):
    """Is the point (PX, PY) inside the rectangle with corners rounded by RX?"""
    if not (x <= px < x + w and y <= py < y + h):
        return False
    cx = min(max(px, x + rx), x + w - rx)  # the nearest point of the rectangle shrunk by rx
    cy = min(max(py, y + rx), y + h - rx)
    return (px - cx) ** 2 + (py - cy) ** 2 <= rx * rx


def pixels(svg_text, size=SIZE):
    """The icon as size x size RGBA tuples, rows from the top: the last rectangle covering a
    sample paints it, and a pixel's alpha is the share of its samples painted."""
    shapes, width = rects(svg_text)
    scale = width / size / SAMPLES
    out = []
    for row in range(size):
        line = []
        for col in range(size):
            painted = []
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    px, py = (col * SAMPLES + sx + 0.5) * scale, (row * SAMPLES + sy + 0.5) * scale
                    hit = [rgb for x, y, w, h, rx, rgb in shapes if _inside(px, py, x, y, w, h, rx)]
                    if hit:
                        painted.append(hit[-1])
            if painted:
                rgb = tuple(round(sum(c[i] for c in painted) / len(painted)) for i in range(3))
                line.append((*rgb, round(255 * len(painted) / SAMPLES**2)))
            else:
                line.append((0, 0, 0, 0))
        out.append(line)
    return out


def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


@functools.lru_cache(maxsize=4)
def png(svg_text, size=SIZE):
    """The PNG file (bytes) of the icon drawn at SIZE pixels square."""
    raw = b"".join(b"\0" + bytes(v for p in line for v in p) for line in pixels(svg_text, size))
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8-bit RGBA, no interlace
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw, 9))
        + _chunk(b"IEND", b"")
    )
