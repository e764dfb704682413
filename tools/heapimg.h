/* SPDX-License-Identifier: Apache-2.0 */
/* The heap picture `ddmc heap --bitmap FILE.png` writes: one pixel per allocation unit (8 bytes),
 * coloured by what occupies it, then a legend strip.
 *
 * Layout (all of it recorded in the PNG's tEXt chunk "ddmc:geometry", so a checker needs no
 * guessing):
 *   rows [0, bitmap_rows): the bitmap. Pixel i (row-major, i = y * bitmap_width + x) shows units
 *     [first_unit + i * upp, first_unit + (i + 1) * upp) of the dump. With upp = 1 (the default,
 *     kept until the heap exceeds max_pixels units) each pixel is exactly one unit, so per-colour
 *     pixel counts over the first `pixels` pixels equal the per-kind unit counts. With upp > 1 a
 *     pixel shows the most common allocated kind among its units if any is allocated, else free
 *     (or gap) space: sparse heaps stay visible, occupancy is over-stated. Pixels from `pixels` to
 *     the end of the last bitmap row, and columns right of bitmap_width, are background.
 *   rows [legend_y, height): the legend on a background strip: a swatch per colour and its label
 *     drawn with a built-in 5x7 font (text in its own colour, used nowhere in the bitmap).
 * The image is palette-indexed (8-bit), so the colours are exact. */
#ifndef DDMC_TOOLS_HEAPIMG_H
#define DDMC_TOOLS_HEAPIMG_H

#include <stddef.h>
#include <stdint.h>

#include "monitor.h"

/* Palette entries, in order. */
enum {
  HEAPIMG_BACKGROUND = 0, /* padding, legend background */
  HEAPIMG_FREE = 1,       /* solidity FREE */
  HEAPIMG_KIND0 = 2,      /* kinds 0..7 are entries 2..9 */
  HEAPIMG_GAP = 10,       /* units inside the extent that no segment described */
  HEAPIMG_TEXT = 11,      /* legend text */
  HEAPIMG_NCOLORS = 12
};

typedef struct heapimg_color {
  const char *name;  /* "free", "object", ..., "gap" (json keys) */
  const char *label; /* legend text */
  uint8_t r, g, b;
} heapimg_color;

/* The colour of palette entry i (0 <= i < HEAPIMG_NCOLORS). */
const heapimg_color *heapimg_color_of(int i);

typedef struct heapimg_geom {
  unsigned width, height;  /* whole image */
  unsigned bitmap_width;   /* pixels per bitmap row */
  unsigned bitmap_rows;
  unsigned legend_y;       /* first legend row */
  uint64_t first_unit;     /* unit shown by pixel 0 */
  uint64_t units;          /* units shown: end_unit - first_unit */
  uint64_t upp;            /* units per pixel */
  uint64_t pixels;         /* bitmap pixels in use: ceil(units / upp) */
  uint64_t gap_units;      /* units in the extent no run covers */
} heapimg_geom;

#define HEAPIMG_DEFAULT_MAX_WIDTH 1024u
#define HEAPIMG_DEFAULT_MAX_PIXELS (1024ull * 4096ull)

/* Writes the picture of a DONE dump to path. max_width (>= 64) caps bitmap_width, max_pixels
 * (>= max_width) caps the bitmap's pixels (upp grows to fit). On error returns -1 with a message
 * in err. *g (may be NULL) receives the geometry. */
int heapimg_write_png(const char *path, const ddmc_host_heapdump *d, unsigned max_width, uint64_t max_pixels,
                      heapimg_geom *g, char *err, size_t errlen);

#endif
