/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc stack ID: the stack of one thread (STKL). */
#include "cli.h"

#include <stdio.h>

#define T_STKL DDMC_HOST_FOURCC('S', 'T', 'K', 'L')

typedef struct stack_ctx {
  sess *s;
  ddmc_host_stkl st;
} stack_ctx;

static int parse_stkl(void *ud, const ddmc_host_packet *r) {
  stack_ctx *c = ud;
  if (!r->is_ddm) return -1;
  if (r->chunk_type != T_STKL) return -2;
  int rc = ddmc_host_stkl_parse(r->chunk, r->chunk_len, &c->st);
  if (rc) sess_fail(c->s, EXIT_NOT_DDM, "malformed STKL reply: %s", ddmc_host_strerror(rc));
  return 0;
}

static int stack_run(sess *s, uint32_t id) {
  stack_ctx c = {s, {0}};
  uint8_t req[4] = {(uint8_t)(id >> 24), (uint8_t)(id >> 16), (uint8_t)(id >> 8), (uint8_t)id};
  char what[64];
  snprintf(what, sizeof what, "the stack of thread %u", (unsigned)id);
  int rc = sess_request(s, what, T_STKL, req, 4, parse_stkl, &c);
  if (rc == -1) sess_fail(s, EXIT_NOT_DDM, "the VM has no STKL answer (empty reply): no stack support");
  if (rc == -2) sess_fail(s, EXIT_NOT_DDM, "the VM answered STKL with another chunk type");
  if (s->o->json) {
    jw w;
    cli_json_begin(s, &w);
    jw_kuint(&w, "thread_id", c.st.thread_id);
    jw_key(&w, "frames");
    jw_arr(&w);
    for (size_t i = 0; i < c.st.count; i++) {
      const ddmc_host_frame *f = &c.st.frames[i];
      jw_obj(&w);
      jw_kstr(&w, "class", f->class_name);
      jw_kstr(&w, "method", f->method);
      jw_kstr(&w, "file", f->file);
      jw_kint(&w, "line", f->line);
      jw_close(&w);
    }
    jw_close(&w);
    ddmc_host_stkl_free(&c.st);
    return cli_json_finish(s, &w);
  }
  printf("thread %u: %zu frame%s\n", (unsigned)c.st.thread_id, c.st.count, c.st.count == 1 ? "" : "s");
  for (size_t i = 0; i < c.st.count; i++) {
    const ddmc_host_frame *f = &c.st.frames[i];
    if (f->file && f->line >= 0)
      printf("  at %s.%s(%s:%d)\n", sess_tx(f->class_name), sess_tx(f->method), sess_tx(f->file), (int)f->line);
    else if (f->file)
      printf("  at %s.%s(%s)\n", sess_tx(f->class_name), sess_tx(f->method), sess_tx(f->file));
    else
      printf("  at %s.%s(Unknown Source)\n", sess_tx(f->class_name), sess_tx(f->method));
  }
  ddmc_host_stkl_free(&c.st);
  return cli_finish_text(s);
}

static int stack_main(opts *o, int argc, char **argv) {
  uint64_t id;
  if (argc != 1 || cli_parse_u64(argv[0], UINT32_MAX, &id)) cli_usage_error("usage: ddmc stack THREAD-ID%s", "");
  sess s;
  sess_open(&s, o);
  int rc = stack_run(&s, (uint32_t)id);
  sess_close(&s);
  return rc;
}

const cli_cmd cmd_stack = {
    .name = "stack",
    .summary = "  stack ID               stack trace of thread ID (STKL)\n",
    .help =
        "usage: ddmc [OPTIONS] stack ID\n"
        "\n"
        "The stack of thread ID (the id from `ddmc threads`, not the tid): STKL.\n"
        "\n"
        "Options: none.\n",
    .run = stack_main,
};
