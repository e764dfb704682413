/* SPDX-License-Identifier: Apache-2.0 */
/* Heap picture as a palette PNG (see heapimg.h). */
#include "heapimg.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapseg.h"

/* Colours: kinds in clearly different hues, free space dark, "no segment" white. */
static const heapimg_color kColors[HEAPIMG_NCOLORS] = {
    {"background", "", 0x00, 0x00, 0x00},
    {"free", "FREE", 0x28, 0x28, 0x28},
    {"object", "OBJECT", 0x3c, 0xb4, 0x4b},
    {"class", "CLASS", 0xff, 0xe1, 0x19},
    {"array1", "BYTE[] BOOLEAN[]", 0xe6, 0x19, 0x4b},
    {"array2", "CHAR[] SHORT[]", 0xf5, 0x82, 0x31},
    {"array4", "INT[] FLOAT[] OBJECT[]", 0x43, 0x63, 0xd8},
    {"array8", "LONG[] DOUBLE[]", 0x91, 0x1e, 0xb4},
    {"unknown", "UNKNOWN", 0xa9, 0xa9, 0xa9},
    {"native", "NATIVE", 0x42, 0xd4, 0xf4},
    {"gap", "NO SEGMENT", 0xff, 0xff, 0xff},
    {"text", "", 0xd0, 0xd0, 0xc8},
};

const heapimg_color *heapimg_color_of(int i) { return i >= 0 && i < HEAPIMG_NCOLORS ? &kColors[i] : NULL; }

static int color_of_state(uint8_t state) {
  if (DDMC_HOST_HEAPSEG_SOLIDITY(state) == 0) return HEAPIMG_FREE;
  return HEAPIMG_KIND0 + (int)DDMC_HOST_HEAPSEG_KIND(state);
}

/* ---- 5x7 font for the legend: rows top to bottom, '#' = ink */

typedef struct glyph {
  char c;
  const char *rows; /* 35 chars: 7 rows of 5 */
} glyph;

static const glyph kFont[] = {
    {'A', ".###.#...##...#######...##...##...#"}, {'B', "####.#...##...#####.#...##...#####."},
    {'C', ".###.#...##....#....#....#...#.###."}, {'D', "###..#..#.#...##...##...##..#.###.."},
    {'E', "######....#....####.#....#....#####"}, {'F', "######....#....####.#....#....#...."},
    {'G', ".###.#...##....#.####...##...#.####"}, {'H', "#...##...##...#######...##...##...#"},
    {'I', ".###...#....#....#....#....#...###."}, {'J', "..###...#....#....#....#.#..#..##.."},
    {'K', "#...##..#.#.#..##...#.#..#..#.#...#"}, {'L', "#....#....#....#....#....#....#####"},
    {'M', "#...###.###.#.##.#.##...##...##...#"}, {'N', "#...##...###..##.#.##..###...##...#"},
    {'O', ".###.#...##...##...##...##...#.###."}, {'P', "####.#...##...#####.#....#....#...."},
    {'Q', ".###.#...##...##...##.#.##..#..##.#"}, {'R', "####.#...##...#####.#.#..#..#.#...#"},
    {'S', ".#####....#.....###.....#....#####."}, {'T', "#####..#....#....#....#....#....#.."},
    {'U', "#...##...##...##...##...##...#.###."}, {'V', "#...##...##...##...##...#.#.#...#.."},
    {'W', "#...##...##...##.#.##.#.##.#.#.#.#."}, {'X', "#...##...#.#.#...#...#.#.#...##...#"},
    {'Y', "#...##...#.#.#...#....#....#....#.."}, {'Z', "#####....#...#...#...#...#....#####"},
    {'0', ".###.#...##..###.#.###..##...#.###."}, {'1', "..#...##....#....#....#....#...###."},
    {'2', ".###.#...#....#...#...#...#...#####"}, {'3', "####.....#....#.###.....#....#####."},
    {'4', "...#...##..#.#.#..#.#####...#....#."}, {'5', "######....####.....#....##...#.###."},
    {'6', "..##..#...#....####.#...##...#.###."}, {'7', "#####....#...#...#...#....#....#..."},
    {'8', ".###.#...##...#.###.#...##...#.###."}, {'9', ".###.#...##...#.####....#...#..##.."},
    {'[', ".###..#....#....#....#....#....###."}, {']', ".###....#....#....#....#....#..###."},
    {'-', "...............#####..............."}, {':', "......##...##........##...##......."},
    {',', ".....................##....#...#..."}, {'/', "....#....#...#...#...#...#....#...."},
    {'.', "..........................##...##.."}, {'(', "...#...#...#....#....#.....#.....#."},
    {')', ".#.....#.....#....#....#...#...#..."}, {'=', "..........#####.....#####.........."},
    {'%', "##...##..#...#...#...#...#..##...##"}, {' ', "..................................."},

};

static const char *glyph_rows(char c) {
  c = (char)toupper((unsigned char)c);
  for (size_t i = 0; i < sizeof kFont / sizeof kFont[0]; i++)
    if (kFont[i].c == c) return kFont[i].rows;
  return NULL; /* unknown characters are drawn as blanks */
}

typedef struct canvas {
  uint8_t *px; /* NULL: measure only */
  unsigned w, h;
} canvas;

static void fill_rect(canvas *cv, unsigned x, unsigned y, unsigned w, unsigned h, uint8_t color) {
  if (cv->px == NULL) return;
  for (unsigned j = y; j < y + h && j < cv->h; j++)
    for (unsigned i = x; i < x + w && i < cv->w; i++) cv->px[(size_t)j * cv->w + i] = color;
}

/* Draws text at (x, y) with scale s; returns its width. */
static unsigned draw_text(canvas *cv, unsigned x, unsigned y, unsigned s, const char *text) {
  unsigned cx = x;
  for (const char *p = text; *p; p++) {
    const char *rows = glyph_rows(*p);
    if (rows != NULL && cv->px != NULL) {
      for (unsigned r = 0; r < 7; r++)
        for (unsigned c = 0; c < 5; c++)
          if (rows[r * 5 + c] == '#') fill_rect(cv, cx + c * s, y + r * s, s, s, HEAPIMG_TEXT);
    }
    cx += 6 * s;
  }
  return cx > x ? cx - x - s : 0;
}

/* Lays out (and, if cv->px, draws) the legend from row y0; returns the rows it needs. */
static unsigned legend(canvas *cv, unsigned y0, unsigned s, const char *title) {
  const unsigned margin = 8, line = 12 * s;
  unsigned x = margin, y = y0 + margin;
  draw_text(cv, x, y, s, title);
  y += line;
  static const int order[] = {HEAPIMG_KIND0 + 0, HEAPIMG_KIND0 + 1, HEAPIMG_KIND0 + 2, HEAPIMG_KIND0 + 3,
                              HEAPIMG_KIND0 + 4, HEAPIMG_KIND0 + 5, HEAPIMG_KIND0 + 6, HEAPIMG_KIND0 + 7,
                              HEAPIMG_FREE,      HEAPIMG_GAP};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    const heapimg_color *c = &kColors[order[i]];
    unsigned sw = 9 * s;
    unsigned need = sw + 4 * s + (unsigned)strlen(c->label) * 6 * s;
    if (x > margin && x + need + margin > cv->w) {
      x = margin;
      y += line;
    }
    /* A text-coloured frame, so the dark "free" swatch shows on the background. */
    fill_rect(cv, x, y - s, sw + 2 * s, sw + 2 * s, HEAPIMG_TEXT);
    fill_rect(cv, x + s, y, sw, sw, (uint8_t)order[i]);
    draw_text(cv, x + sw + 5 * s, y + s, s, c->label);
    x += need + 16 * s;
  }
  y += line;
  return y + margin - y0;
}

/* ---- bitmap painting */

typedef struct painter {
  uint8_t *px;
  uint64_t upp, pix, filled;
  uint64_t counts[HEAPIMG_NCOLORS];
} painter;

/* A scaled pixel shows the most common allocated kind if any of its units is allocated, else free
 * or gap, whichever covers more: a sparse heap stays visible at the price of over-stating
 * occupancy (the unit counts printed beside the picture are exact). */
static void flush_pixel(painter *p) {
  int best = -1;
  for (int i = HEAPIMG_KIND0; i < HEAPIMG_KIND0 + 8; i++)
    if (p->counts[i] > 0 && (best < 0 || p->counts[i] > p->counts[best])) best = i;
  if (best < 0) best = p->counts[HEAPIMG_GAP] > p->counts[HEAPIMG_FREE] ? HEAPIMG_GAP : HEAPIMG_FREE;
  p->px[p->pix++] = (uint8_t)best;
  memset(p->counts, 0, sizeof p->counts);
  p->filled = 0;
}

/* The next n units have this colour. */
static void paint(painter *p, int color, uint64_t n) {
  while (n > 0) {
    if (p->filled == 0 && n >= p->upp) {
      uint64_t whole = n / p->upp;
      memset(p->px + p->pix, color, (size_t)whole);
      p->pix += whole;
      n -= whole * p->upp;
      continue;
    }
    uint64_t take = p->upp - p->filled;
    if (take > n) take = n;
    p->counts[color] += take;
    p->filled += take;
    n -= take;
    if (p->filled == p->upp) flush_pixel(p);
  }
}

static int fail(char *err, size_t errlen, const char *fmt, const char *a, const char *b) {
  snprintf(err, errlen, fmt, a, b);
  return -1;
}

typedef struct png_err {
  char msg[200];
} png_err;

static void on_png_error(png_structp png, png_const_charp msg) {
  png_err *e = png_get_error_ptr(png);
  snprintf(e->msg, sizeof e->msg, "%s", msg);
  png_longjmp(png, 1);
}
static void on_png_warning(png_structp png, png_const_charp msg) {
  (void)png;
  (void)msg;
}

/* The picture's size for the dump: units per pixel so that at most max_pixels show the heap, rows
 * of at most max_width pixels; the legend's height is added by the caller. */
static void compute_geom(const ddmc_host_heapdump *d, unsigned max_width, uint64_t max_pixels, heapimg_geom *gp) {
  heapimg_geom g;
  memset(&g, 0, sizeof g);
  g.first_unit = d->first_unit;
  g.units = d->end_unit - d->first_unit;
  g.gap_units = g.units - d->covered_units;
  g.upp = g.units > max_pixels ? (g.units + max_pixels - 1) / max_pixels : 1;
  g.pixels = (g.units + g.upp - 1) / g.upp;
  g.bitmap_width = g.pixels < max_width ? (unsigned)(g.pixels ? g.pixels : 1) : max_width;
  g.bitmap_rows = (unsigned)((g.pixels + g.bitmap_width - 1) / g.bitmap_width);
  g.width = g.bitmap_width < 320 ? 320 : g.bitmap_width;
  *gp = g;
}

/* The palette and the text chunks that let a reader find the units again (ddmc:geometry,
 * ddmc:palette). */
static void set_meta(png_structp png, png_infop info, const ddmc_host_heapdump *d, const heapimg_geom *gp) {
  heapimg_geom g = *gp;
  png_color pal[HEAPIMG_NCOLORS];
  for (int i = 0; i < HEAPIMG_NCOLORS; i++) pal[i] = (png_color){kColors[i].r, kColors[i].g, kColors[i].b};
  png_set_PLTE(png, info, pal, HEAPIMG_NCOLORS);

  char geom[400], palette[600];
  snprintf(geom, sizeof geom,
           "heap_id=%" PRIu32 " unit_size=%u first_unit=%" PRIu64 " units=%" PRIu64 " upp=%" PRIu64 " pixels=%" PRIu64
           " bitmap_width=%u bitmap_rows=%u legend_y=%u",
           d->heap_id, (unsigned)d->unit_size, g.first_unit, g.units, g.upp, g.pixels, g.bitmap_width, g.bitmap_rows,
           g.legend_y);
  size_t off = 0;
  for (int i = 0; i < HEAPIMG_NCOLORS && off < sizeof palette; i++)
    off += (size_t)snprintf(palette + off, sizeof palette - off, "%s%s=#%02x%02x%02x", i ? " " : "", kColors[i].name,
                            kColors[i].r, kColors[i].g, kColors[i].b);
  png_text text[3];
  memset(text, 0, sizeof text);
  text[0].compression = text[1].compression = text[2].compression = PNG_TEXT_COMPRESSION_NONE;
  text[0].key = (png_charp) "Software";
  text[0].text = (png_charp) "ddmc heap --bitmap";
  text[1].key = (png_charp) "ddmc:geometry";
  text[1].text = geom;
  text[2].key = (png_charp) "ddmc:palette";
  text[2].text = palette;
  png_set_text(png, info, text, 3);
}

int heapimg_write_png(const char *path, const ddmc_host_heapdump *d, unsigned max_width, uint64_t max_pixels,
                      heapimg_geom *gout, char *err, size_t errlen) {
  if (d->state != DDMC_HOST_DUMP_DONE) return fail(err, errlen, "%s%s", "no complete heap dump", "");
  if (max_width < 64) max_width = 64;
  if (max_pixels < max_width) max_pixels = max_width;
  heapimg_geom g;
  compute_geom(d, max_width, max_pixels, &g);
  unsigned s = g.width >= 768 ? 2 : 1;
  char title[160];
  snprintf(title, sizeof title, "HEAP %" PRIu32 ": %" PRIu64 " UNITS OF %u BYTES, %" PRIu64 " PER PIXEL, %u PER ROW",
           d->heap_id, g.units, (unsigned)d->unit_size, g.upp, g.bitmap_width);
  canvas measure = {NULL, g.width, 0};
  unsigned legend_h = legend(&measure, 0, s, title);
  g.legend_y = g.bitmap_rows;
  g.height = g.bitmap_rows + legend_h;
  if ((uint64_t)g.width * g.height > 512ull * 1024 * 1024) return fail(err, errlen, "%s%s", "picture too large", "");

  uint8_t *px = calloc((size_t)g.width * g.height, 1); /* 0 = background */
  uint8_t *bm = calloc((size_t)g.pixels + 1, 1);
  if (px == NULL || bm == NULL) {
    free(px);
    free(bm);
    return fail(err, errlen, "%s%s", "out of memory for the picture", "");
  }
  painter p = {bm, g.upp, 0, 0, {0}};
  uint64_t at = d->first_unit;
  for (size_t i = 0; i < d->n_runs; i++) {
    const ddmc_host_heap_run *r = &d->runs[i];
    if (r->unit > at) paint(&p, HEAPIMG_GAP, r->unit - at);
    paint(&p, color_of_state(r->state), r->units);
    at = r->unit + r->units;
  }
  if (p.filled) flush_pixel(&p);
  for (uint64_t i = 0; i < g.pixels; i++)
    px[(size_t)(i / g.bitmap_width) * g.width + (size_t)(i % g.bitmap_width)] = bm[i];
  free(bm);
  canvas cv = {px, g.width, g.height};
  legend(&cv, g.legend_y, s, title);

  FILE *f = fopen(path, "wb");
  if (f == NULL) {
    free(px);
    return fail(err, errlen, "cannot create %s: %s", path, strerror(errno));
  }
  png_err pe = {""};
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &pe, on_png_error, on_png_warning);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (png == NULL || info == NULL) {
    png_destroy_write_struct(&png, &info);
    fclose(f);
    free(px);
    return fail(err, errlen, "%s%s", "libpng: out of memory", "");
  }
  png_bytep *rows = NULL;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    fclose(f);
    free(px);
    free(rows);
    return fail(err, errlen, "libpng: %s%s", pe.msg, "");
  }
  png_init_io(png, f);
  png_set_IHDR(png, info, g.width, g.height, 8, PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  set_meta(png, info, d, &g);

  rows = malloc(sizeof *rows * g.height);
  if (rows == NULL) png_error(png, "out of memory");
  for (unsigned y = 0; y < g.height; y++) rows[y] = px + (size_t)y * g.width;
  png_set_rows(png, info, rows);
  png_write_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
  png_destroy_write_struct(&png, &info);
  free(rows);
  free(px);
  if (fclose(f) != 0) return fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
  if (gout) *gout = g;
  return 0;
}
