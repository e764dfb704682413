#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/scale_plot.py POINTS.tsv OUT.svg: the scale section's cost curves (bench_hotspot.c), one
panel per figure, size against cost on log-log axes, libddmcjdwp.so against the reference (libjdwp,
or the VM's own dumper for heap dumps). POINTS.tsv lines: curve, size, ours, reference, unit
(ns or bytes); a value <= 0 is a failed measurement and is left out. Plain SVG, no library."""
import math
import sys
from collections import OrderedDict

W, H, PAD_L, PAD_R, PAD_T, PAD_B = 330, 240, 62, 14, 30, 40
COLS = 3
OURS, REF = "#d62728", "#1f77b4"


def fmt(v, unit):
    if unit == "bytes":
        return "%.0f MiB" % (v / 2**20) if v >= 2**20 else "%.0f KiB" % (v / 1024)
    for div, suf in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
        if v >= div:
            return "%g %s" % (float("%.2g" % (v / div)), suf)
    return "%.0f ns" % v


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def panel(out, x0, y0, name, pts, unit):
    xs = [p[0] for p in pts]
    ys = [v for p in pts for v in p[1:] if v > 0]
    if not xs or not ys:
        return
    lx0, lx1 = math.log10(min(xs)), math.log10(max(xs))
    ly0, ly1 = math.log10(min(ys)), math.log10(max(ys))
    if lx1 - lx0 < 1e-9:
        lx0, lx1 = lx0 - 0.5, lx1 + 0.5
    if ly1 - ly0 < 1e-9:
        ly0, ly1 = ly0 - 0.5, ly1 + 0.5
    ly0, ly1 = ly0 - 0.1 * (ly1 - ly0), ly1 + 0.1 * (ly1 - ly0)
    pw, ph = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def sx(x):
        return x0 + PAD_L + (math.log10(x) - lx0) / (lx1 - lx0) * pw

    def sy(y):
        return y0 + PAD_T + ph - (math.log10(y) - ly0) / (ly1 - ly0) * ph

    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>' % (x0 + PAD_L, y0 + PAD_T, pw, ph))
    out.append('<text x="%d" y="%d" font-size="12" font-weight="bold">%s</text>' % (x0 + 6, y0 + 16, esc(name)))
    for x in xs:
        out.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>' % (sx(x), y0 + H - PAD_B + 14, "{:,}".format(int(x))))
    for y in (min(ys), max(ys)):
        out.append('<text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>' % (x0 + PAD_L - 4, sy(y) + 3, fmt(y, unit)))
    for k, colour in ((1, OURS), (2, REF)):
        line = [(sx(p[0]), sy(p[k])) for p in pts if p[k] > 0]
        if len(line) > 1:
            out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (colour, " ".join("%.1f,%.1f" % q for q in line)))
        for q in line:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (q[0], q[1], colour))


def main():
    src, dst = sys.argv[1:3]
    curves = OrderedDict()
    units = {}
    for line in open(src):
        f = line.rstrip("\n").split("\t")
        if len(f) != 5:
            continue
        curves.setdefault(f[0], {})[float(f[1])] = (float(f[2]), float(f[3]))
        units[f[0]] = f[4]
    rows = (len(curves) + COLS - 1) // COLS
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">' % (W * COLS, H * rows + 30),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="8" y="%d" font-size="12"><tspan fill="%s">&#9632; libddmcjdwp.so</tspan>  '
           '<tspan fill="%s">&#9632; reference: libjdwp (heap dump: HotSpot\'s own dumpHeap)</tspan>  '
           'log-log; x: size, y: time (or RSS)</text>' % (H * rows + 20, OURS, REF)]
    for i, (name, pts) in enumerate(curves.items()):
        panel(out, (i % COLS) * W, (i // COLS) * H, name, sorted((x, o, r) for x, (o, r) in pts.items()), units[name])
    out.append("</svg>")
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
