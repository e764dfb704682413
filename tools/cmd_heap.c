/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc heap [--bitmap FILE.png]: the heap summary (HPIF), or a collection's segment dump (HPSG)
 * drawn as a PNG (heapimg.c). The HPIF pieces serve ddmc gc too (cli.h). */
#include "cli.h"
#include "heapimg.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define T_HPIF DDMC_HOST_FOURCC('H', 'P', 'I', 'F')
#define T_HPGC DDMC_HOST_FOURCC('H', 'P', 'G', 'C')
#define T_HPSG DDMC_HOST_FOURCC('H', 'P', 'S', 'G')

static int g_hpif_base; /* hpif_seq before the request whose HPIF is awaited */
static int hpif_newer(sess *s) { return s->hpif_seq > g_hpif_base; }

void cmd_heap_json_hpif(jw *w, const char *key, const ddmc_host_heap_info *h) {
  jw_key(w, key);
  jw_obj(w);
  jw_kuint(w, "heap_id", h->heap_id);
  jw_kuint(w, "timestamp_ms", h->timestamp_ms);
  jw_kuint(w, "reason", h->reason);
  jw_kuint(w, "max_bytes", h->max_bytes);
  jw_kuint(w, "footprint", h->footprint);
  jw_kuint(w, "allocated_bytes", h->allocated_bytes);
  jw_kuint(w, "allocated_objects", h->allocated_objects);
  jw_close(w);
}

void cmd_heap_print_hpif(const ddmc_host_heap_info *h) {
  char a[32], b[32], c[32];
  time_t secs = (time_t)(h->timestamp_ms / 1000);
  char when[32];
  strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&secs));
  printf("heap %u at %s.%03u\n", (unsigned)h->heap_id, when, (unsigned)(h->timestamp_ms % 1000));
  printf("  %-18s %12" PRIu32 "  (%s)\n", "max", h->max_bytes, cli_human_bytes(h->max_bytes, a, sizeof a));
  printf("  %-18s %12" PRIu32 "  (%s)\n", "footprint", h->footprint, cli_human_bytes(h->footprint, b, sizeof b));
  printf("  %-18s %12" PRIu32 "  (%s, %.1f%% of the footprint)\n", "allocated bytes", h->allocated_bytes,
         cli_human_bytes(h->allocated_bytes, c, sizeof c),
         h->footprint ? 100.0 * (double)h->allocated_bytes / (double)h->footprint : 0.0);
  printf("  %-18s %12" PRIu32 "\n", "allocated objects", h->allocated_objects);
}

/* HPIF 1: the HPIF chunk comes before the empty reply. */
void cmd_heap_now(sess *s) {
  uint8_t when = 1;
  int seq = g_hpif_base = s->hpif_seq;
  sess_request(s, "the heap info (HPIF)", T_HPIF, &when, 1, NULL, NULL);
  if (s->hpif_seq == seq) sess_pump(s, s->o->timeout_ms, hpif_newer);
  if (s->hpif_seq == seq)
    sess_fail(s, EXIT_TIMEOUT, "the VM accepted HPIF but sent no heap info within %d ms", s->o->timeout_ms);
}

static int dump_ready(sess *s) {
  /* A complete dump, and the HPIF (reason NEXT_GC) the same collection sends after it. */
  return s->dump.state == DDMC_HOST_DUMP_DONE && s->hpif_seq > s->dump_done_seq && s->hpif.reason == 2;
}

/* Asks for one collection with its segment dump (HPSG) and the HPIF after it; fails the program when
 * they do not come within dump_timeout_ms. Returns how long it took (ms). */
static int64_t collect_dump(sess *s, int dump_timeout_ms) {
  s->track_heap = 1;
  uint8_t hpsg_on[2] = {1, 0}, hpsg_off[2] = {0, 0}, next_gc = 2;
  int64_t t_start = sess_mono_ms();
  sess_request(s, "heap segment dumps (HPSG 1,0)", T_HPSG, hpsg_on, 2, NULL, NULL);
  sess_request(s, "heap info at the next GC (HPIF 2)", T_HPIF, &next_gc, 1, NULL, NULL);
  s->hpif_seq = s->dump_done_seq = 0;
  s->hpif.reason = 0;
  sess_request(s, "a garbage collection (HPGC)", T_HPGC, NULL, 0, NULL, NULL);
  int got = sess_pump(s, dump_timeout_ms, dump_ready);
  /* Off again before anything can fail, so the VM stops dumping at every GC. */
  sess_request(s, "the end of heap dumps (HPSG 0,0)", T_HPSG, hpsg_off, 2, NULL, NULL);
  if (!got) {
    if (sess_interrupted) sess_fail(s, EXIT_ERROR, "interrupted");
    sess_fail(s, EXIT_TIMEOUT, "no complete heap dump (HPST..HPEN + HPIF) within %d ms (%s)", dump_timeout_ms,
              s->dump.state == DDMC_HOST_DUMP_OPEN   ? "a dump started but did not end"
              : s->dump.state == DDMC_HOST_DUMP_DONE ? "the dump came without its HPIF"
                                                     : "no dump started");
  }
  return sess_mono_ms() - t_start;
}

/* The colours in legend order: the eight kinds, free, gap. */
static const int k_order[] = {HEAPIMG_KIND0 + 0, HEAPIMG_KIND0 + 1, HEAPIMG_KIND0 + 2, HEAPIMG_KIND0 + 3,
                              HEAPIMG_KIND0 + 4, HEAPIMG_KIND0 + 5, HEAPIMG_KIND0 + 6, HEAPIMG_KIND0 + 7,
                              HEAPIMG_FREE,      HEAPIMG_GAP};

static uint64_t units_of(const ddmc_host_heapdump *d, const heapimg_geom *g, int ci) {
  return ci == HEAPIMG_FREE ? d->free_units : ci == HEAPIMG_GAP ? g->gap_units : d->kind_units[ci - HEAPIMG_KIND0];
}

static int bitmap_json(sess *s, const char *path, const heapimg_geom *g, int64_t t_dump) {
  const ddmc_host_heapdump *d = &s->dump;
  uint64_t unit = d->unit_size;
  uint64_t covered_bytes = g->units * unit;
  int matches = covered_bytes == s->hpif.footprint;
  jw w;
  cli_json_begin(s, &w);
  cmd_heap_json_hpif(&w, "heap", &s->hpif);
  jw_key(&w, "dump");
  jw_obj(&w);
  jw_kuint(&w, "heap_id", d->heap_id);
  jw_kstr(&w, "chunk_type", d->distinct ? "HPSO" : "HPSG");
  jw_kuint(&w, "unit_size", unit);
  jw_kuint(&w, "chunks", d->chunks);
  jw_kuint(&w, "runs", d->n_runs);
  jw_kuint(&w, "first_unit", d->first_unit);
  jw_kuint(&w, "units", g->units);
  jw_kuint(&w, "bytes", covered_bytes);
  jw_kuint(&w, "covered_units", d->covered_units);
  jw_kuint(&w, "free_units", d->free_units);
  jw_kuint(&w, "gap_units", g->gap_units);
  jw_kbool(&w, "covers_footprint", matches);
  jw_kint(&w, "elapsed_ms", t_dump);
  jw_key(&w, "kinds");
  jw_obj(&w);
  for (size_t i = 0; i < sizeof k_order / sizeof k_order[0]; i++) {
    int ci = k_order[i];
    const heapimg_color *c = heapimg_color_of(ci);
    uint64_t units = units_of(d, g, ci);
    jw_key(&w, c->name);
    jw_obj(&w);
    jw_kuint(&w, "units", units);
    jw_kuint(&w, "bytes", units * unit);
    if (ci >= HEAPIMG_KIND0 && ci < HEAPIMG_KIND0 + 8) jw_kuint(&w, "runs", d->kind_runs[ci - HEAPIMG_KIND0]);
    char hex[8];
    snprintf(hex, sizeof hex, "#%02x%02x%02x", c->r, c->g, c->b);
    jw_kstr(&w, "color", hex);
    jw_kstr(&w, "label", c->label);
    jw_close(&w);
  }
  jw_close(&w);
  jw_close(&w);
  jw_key(&w, "bitmap");
  jw_obj(&w);
  jw_kstr(&w, "path", path);
  jw_kuint(&w, "width", g->width);
  jw_kuint(&w, "height", g->height);
  jw_kuint(&w, "bitmap_width", g->bitmap_width);
  jw_kuint(&w, "bitmap_rows", g->bitmap_rows);
  jw_kuint(&w, "legend_y", g->legend_y);
  jw_kuint(&w, "units_per_pixel", g->upp);
  jw_kuint(&w, "pixels", g->pixels);
  jw_close(&w);
  return cli_json_finish(s, &w);
}

static int bitmap_text(sess *s, const char *path, const heapimg_geom *g, int64_t t_dump) {
  const ddmc_host_heapdump *d = &s->dump;
  uint64_t unit = d->unit_size;
  uint64_t covered_bytes = g->units * unit;
  int matches = covered_bytes == s->hpif.footprint;
  cmd_heap_print_hpif(&s->hpif);
  char hb[32];
  printf("\nsegment dump: %" PRIu64 " units of %u bytes (%s) in %" PRIu64 " %s chunks, %zu runs, %.2f s\n", g->units,
         (unsigned)unit, cli_human_bytes(covered_bytes, hb, sizeof hb), d->chunks, d->distinct ? "HPSO" : "HPSG",
         d->n_runs, (double)t_dump / 1000.0);
  if (!matches)
    printf("note: the dump covers %" PRIu64 " bytes, the footprint is %" PRIu32 " bytes\n", covered_bytes,
           s->hpif.footprint);
  int tty = isatty(STDOUT_FILENO);
  printf("\n  %s%-7s  %-24s %12s %14s %7s  %s\n", tty ? "   " : "", "COLOUR", "KIND", "UNITS", "BYTES", "SHARE",
         "RUNS");
  for (size_t i = 0; i < sizeof k_order / sizeof k_order[0]; i++) {
    int ci = k_order[i];
    const heapimg_color *c = heapimg_color_of(ci);
    uint64_t units = units_of(d, g, ci);
    if (ci == HEAPIMG_GAP && units == 0) continue;
    char runs[24] = "";
    if (ci >= HEAPIMG_KIND0 && ci < HEAPIMG_KIND0 + 8)
      snprintf(runs, sizeof runs, "%" PRIu64, d->kind_runs[ci - HEAPIMG_KIND0]);
    /* A truecolour swatch on terminals; the hex code always. */
    if (tty)
      printf("  \033[48;2;%u;%u;%um  \033[0m #%02x%02x%02x", c->r, c->g, c->b, c->r, c->g, c->b);
    else
      printf("  #%02x%02x%02x", c->r, c->g, c->b);
    printf("  %-24s %12" PRIu64 " %14" PRIu64 " %6.2f%%  %s\n", c->label, units, units * unit,
           g->units ? 100.0 * (double)units / (double)g->units : 0.0, runs);
  }
  printf("\nwrote %s: %ux%u px, %" PRIu64 " unit%s per pixel, %u per row, legend from row %u\n", path, g->width,
         g->height, g->upp, g->upp == 1 ? "" : "s", g->bitmap_width, g->legend_y);
  return cli_finish_text(s);
}

static int heap_bitmap(sess *s, const char *path, unsigned max_width, int dump_timeout_ms) {
  int64_t t_dump = collect_dump(s, dump_timeout_ms);
  char err[300];
  heapimg_geom g;
  if (heapimg_write_png(path, &s->dump, max_width, HEAPIMG_DEFAULT_MAX_PIXELS, &g, err, sizeof err) != 0)
    sess_fail(s, EXIT_ERROR, "%s", err);
  return s->o->json ? bitmap_json(s, path, &g, t_dump) : bitmap_text(s, path, &g, t_dump);
}

static int heap_run(sess *s, const char *bitmap, uint64_t max_width, uint64_t dump_timeout) {
  if (bitmap) {
    /* A collection on a big heap takes a while: default to the larger of 30 s and -t. */
    int dt = dump_timeout ? (int)dump_timeout : (s->o->timeout_ms > 30000 ? s->o->timeout_ms : 30000);
    return heap_bitmap(s, bitmap, (unsigned)max_width, dt);
  }
  cmd_heap_now(s);
  if (s->o->json) {
    jw w;
    cli_json_begin(s, &w);
    cmd_heap_json_hpif(&w, "heap", &s->hpif);
    return cli_json_finish(s, &w);
  }
  cmd_heap_print_hpif(&s->hpif);
  return cli_finish_text(s);
}

static int heap_main(opts *o, int argc, char **argv) {
  uint64_t max_width = HEAPIMG_DEFAULT_MAX_WIDTH, dump_timeout = 0;
  const char *bitmap = NULL;
  for (int k = 0; k < argc; k++) {
    if (strcmp(argv[k], "--bitmap") == 0 || strcmp(argv[k], "-b") == 0) {
      if (k + 1 >= argc) cli_usage_error("%s needs a FILE.png", argv[k]);
      bitmap = argv[++k];
    } else if (strcmp(argv[k], "--max-width") == 0) {
      if (k + 1 >= argc || cli_parse_u64(argv[k + 1], 65536, &max_width) || max_width < 64)
        cli_usage_error("--max-width needs a width in pixels, 64..65536 (got '%s')", k + 1 < argc ? argv[k + 1] : "");
      k++;
    } else if (strcmp(argv[k], "--dump-timeout") == 0) {
      if (k + 1 >= argc || cli_parse_u64(argv[k + 1], 3600000, &dump_timeout) || dump_timeout == 0)
        cli_usage_error("--dump-timeout needs milliseconds (got '%s')", k + 1 < argc ? argv[k + 1] : "");
      k++;
    } else {
      cli_usage_error("heap: unknown argument '%s'", argv[k]);
    }
  }
  sess s;
  sess_open(&s, o);
  int rc = heap_run(&s, bitmap, max_width, dump_timeout);
  sess_close(&s);
  return rc;
}

const cli_cmd cmd_heap = {
    .name = "heap",
    .summary =
        "  heap                   heap summary (HPIF): max, footprint, allocated bytes and objects\n"
        "  heap --bitmap FILE.png collect (HPGC), take the segment dump (HPSG) and draw it: one\n"
        "                         pixel per 8-byte unit, coloured by kind, legend below; prints\n"
        "                         per-kind unit counts. [--max-width PX] [--dump-timeout MS]\n",
    .help =
        "usage: ddmc [OPTIONS] heap [--bitmap FILE.png [--max-width PX] [--dump-timeout MS]]\n"
        "\n"
        "The heap summary (HPIF): max, footprint, allocated bytes and objects. With --bitmap, a\n"
        "collection (HPGC) and the heap segment dump (HPSG) drawn as a PNG, with per-kind unit counts.\n"
        "\n"
        "Options:\n"
        "  -b, --bitmap FILE.png    draw the heap into FILE.png (one pixel per 8-byte unit)\n"
        "      --max-width PX       widest picture, 64..65536 pixels (default 1024)\n"
        "      --dump-timeout MS    how long the dump may take (default: -t, at least 30000)\n",
    .run = heap_main,
};
