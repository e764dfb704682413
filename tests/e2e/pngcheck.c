/* SPDX-License-Identifier: Apache-2.0 */
/* pngcheck FILE.png: decodes a `ddmc heap --bitmap` picture with libpng, independently of ddmc's
 * writer, and prints one JSON object on stdout for the e2e driver to compare with ddmc's own
 * --json report:
 *   {"width": W, "height": H, "geometry": {...the "ddmc:geometry" tEXt fields...},
 *    "bitmap_colors": {"#rrggbb": pixels, ...},   over the first `pixels` bitmap pixels
 *    "padding_colors": {...},                      rest of the bitmap rows (must be background)
 *    "legend_colors": {...}}                       rows from legend_y on
 * Whatever the PNG's colour type, pixels are expanded to 8-bit RGB before counting.
 * Exit: 0 ok, 1 not a readable PNG or no/invalid geometry text. */
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLORS 4096

typedef struct counts {
  unsigned rgb[MAX_COLORS];
  unsigned long long n[MAX_COLORS];
  size_t used;
} counts;

static void count(counts *c, unsigned rgb) {
  for (size_t i = 0; i < c->used; i++) {
    if (c->rgb[i] == rgb) {
      c->n[i]++;
      return;
    }
  }
  if (c->used < MAX_COLORS) {
    c->rgb[c->used] = rgb;
    c->n[c->used++] = 1;
  }
}

static void print_counts(const char *key, const counts *c) {
  printf("  \"%s\": {", key);
  for (size_t i = 0; i < c->used; i++) printf("%s\"#%06x\": %llu", i ? ", " : "", c->rgb[i], c->n[i]);
  printf("}");
}

/* Reads "key=value" (an unsigned number) out of the geometry text; -1 if missing. */
static long long geo(const char *text, const char *key) {
  size_t kl = strlen(key);
  for (const char *p = text; (p = strstr(p, key)) != NULL; p += kl) {
    if ((p == text || p[-1] == ' ') && p[kl] == '=') return strtoll(p + kl + 1, NULL, 10);
  }
  return -1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: pngcheck FILE.png\n");
    return 1;
  }
  FILE *f = fopen(argv[1], "rb");
  if (f == NULL) {
    perror(argv[1]);
    return 1;
  }
  unsigned char sig[8];
  if (fread(sig, 1, 8, f) != 8 || png_sig_cmp(sig, 0, 8) != 0) {
    fprintf(stderr, "pngcheck: %s: not a PNG\n", argv[1]);
    return 1;
  }
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png_create_info_struct(png);
  static counts bitmap, padding, legend;
  png_bytep *rows = NULL;
  if (setjmp(png_jmpbuf(png))) {
    fprintf(stderr, "pngcheck: %s: libpng could not decode it\n", argv[1]);
    return 1;
  }
  png_init_io(png, f);
  png_set_sig_bytes(png, 8);
  png_read_info(png, info);
  png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
  int ct = png_get_color_type(png, info), bd = png_get_bit_depth(png, info);
  if (ct == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (ct == PNG_COLOR_TYPE_GRAY || ct == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
  if (bd == 16) png_set_strip_16(png);
  if (bd < 8) png_set_packing(png);
  if (ct & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != (size_t)w * 3) {
    fprintf(stderr, "pngcheck: unexpected row size\n");
    return 1;
  }
  rows = malloc(sizeof *rows * h);
  for (png_uint_32 y = 0; y < h; y++) rows[y] = malloc((size_t)w * 3);
  png_read_image(png, rows);
  png_read_end(png, info);

  png_textp text;
  int ntext = 0;
  const char *geometry = NULL, *palette = NULL, *software = NULL;
  png_get_text(png, info, &text, &ntext);
  for (int i = 0; i < ntext; i++) {
    if (strcmp(text[i].key, "ddmc:geometry") == 0) geometry = text[i].text;
    if (strcmp(text[i].key, "ddmc:palette") == 0) palette = text[i].text;
    if (strcmp(text[i].key, "Software") == 0) software = text[i].text;
  }
  if (geometry == NULL) {
    fprintf(stderr, "pngcheck: no ddmc:geometry text chunk\n");
    return 1;
  }
  long long bw = geo(geometry, "bitmap_width"), br = geo(geometry, "bitmap_rows");
  long long pixels = geo(geometry, "pixels"), legend_y = geo(geometry, "legend_y");
  if (bw <= 0 || br < 0 || pixels < 0 || legend_y < 0 || bw > (long long)w || legend_y > (long long)h ||
      br > legend_y || pixels > bw * br) {
    fprintf(stderr, "pngcheck: geometry '%s' does not fit a %ux%u image\n", geometry, (unsigned)w, (unsigned)h);
    return 1;
  }
  for (png_uint_32 y = 0; y < h; y++) {
    for (png_uint_32 x = 0; x < w; x++) {
      const unsigned char *p = rows[y] + 3 * (size_t)x;
      unsigned rgb = (unsigned)p[0] << 16 | (unsigned)p[1] << 8 | p[2];
      if ((long long)y >= legend_y) {
        count(&legend, rgb);
      } else if ((long long)y < br && (long long)x < bw && (long long)y * bw + x < pixels) {
        count(&bitmap, rgb);
      } else {
        count(&padding, rgb);
      }
    }
  }
  printf("{\n  \"width\": %u,\n  \"height\": %u,\n", (unsigned)w, (unsigned)h);
  printf("  \"software\": \"%s\",\n", software ? software : "");
  printf("  \"geometry\": {\"bitmap_width\": %lld, \"bitmap_rows\": %lld, \"pixels\": %lld, \"legend_y\": %lld, "
         "\"units\": %lld, \"upp\": %lld, \"unit_size\": %lld, \"first_unit\": %lld},\n",
         bw, br, pixels, legend_y, geo(geometry, "units"), geo(geometry, "upp"), geo(geometry, "unit_size"),
         geo(geometry, "first_unit"));
  printf("  \"palette_text\": \"%s\",\n", palette ? palette : "");
  print_counts("bitmap_colors", &bitmap);
  printf(",\n");
  print_counts("padding_colors", &padding);
  printf(",\n");
  print_counts("legend_colors", &legend);
  printf("\n}\n");
  for (png_uint_32 y = 0; y < h; y++) free(rows[y]);
  free(rows);
  png_destroy_read_struct(&png, &info, NULL);
  fclose(f);
  return 0;
}
