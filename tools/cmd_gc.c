/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc gc: a collection (HPGC), with the heap info (HPIF) before and after. */
#include "cli.h"

#include <inttypes.h>
#include <stdio.h>

#define T_HPIF DDMC_HOST_FOURCC('H', 'P', 'I', 'F')
#define T_HPGC DDMC_HOST_FOURCC('H', 'P', 'G', 'C')

static int hpif_after_gc(sess *s) { return s->hpif_seq > 0 && s->hpif.reason == 2; }

static int gc_run(sess *s) {
  cmd_heap_now(s);
  ddmc_host_heap_info before = s->hpif;
  uint8_t next_gc = 2;
  sess_request(s, "heap info at the next GC (HPIF 2)", T_HPIF, &next_gc, 1, NULL, NULL);
  s->hpif_seq = 0;
  int64_t t = sess_mono_ms();
  sess_request(s, "a garbage collection (HPGC)", T_HPGC, NULL, 0, NULL, NULL);
  int done = sess_pump(s, s->o->timeout_ms, hpif_after_gc);
  int64_t ms = sess_mono_ms() - t;
  if (s->o->json) {
    jw w;
    cli_json_begin(s, &w);
    jw_kbool(&w, "requested", 1);
    jw_kbool(&w, "completed", done);
    cmd_heap_json_hpif(&w, "before", &before);
    if (done) {
      cmd_heap_json_hpif(&w, "after", &s->hpif);
      jw_kint(&w, "freed_bytes", (int64_t)before.allocated_bytes - (int64_t)s->hpif.allocated_bytes);
      jw_kint(&w, "elapsed_ms", ms);
    }
    return cli_json_finish(s, &w);
  }
  if (!done) {
    printf("GC requested; the VM sent no heap info after it within %d ms\n", s->o->timeout_ms);
  } else {
    char a[32], b[32], c[32], f[32];
    int64_t freed = (int64_t)before.allocated_bytes - (int64_t)s->hpif.allocated_bytes;
    printf("GC done in %.2f s: allocated %s -> %s (%s %s), objects %" PRIu32 " -> %" PRIu32 ", footprint %s\n",
           (double)ms / 1000.0, cli_human_bytes(before.allocated_bytes, a, sizeof a),
           cli_human_bytes(s->hpif.allocated_bytes, b, sizeof b), freed >= 0 ? "freed" : "grew by",
           cli_human_bytes((uint64_t)(freed >= 0 ? freed : -freed), c, sizeof c), before.allocated_objects,
           s->hpif.allocated_objects, cli_human_bytes(s->hpif.footprint, f, sizeof f));
  }
  return cli_finish_text(s);
}

static int gc_main(opts *o, int argc, char **argv) {
  if (argc > 0) cli_usage_error("this command takes no arguments (got '%s')", argv[0]);
  sess s;
  sess_open(&s, o);
  int rc = gc_run(&s);
  sess_close(&s);
  return rc;
}

const cli_cmd cmd_gc = {
    .name = "gc",
    .summary = "  gc                     ask the VM to collect (HPGC); reports the heap before and after\n",
    .help =
        "usage: ddmc [OPTIONS] gc\n"
        "\n"
        "Ask the VM to collect (HPGC); reports the heap before and after.\n"
        "\n"
        "Options: none.\n",
    .run = gc_main,
};
