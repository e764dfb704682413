/* SPDX-License-Identifier: Apache-2.0 */
/* See dmtrace.h. Load: once per finished trace, one line per thread and per method. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "profile/dmtrace.h"

static void put_text(ddmc_buf *b, const char *s) { ddmc_buf_put_bytes(b, s, strlen(s)); }

/* A field of a key line: control characters that would end the field or the line become spaces;
 * an empty field becomes "?" (dmtracedump reads fields with strtok-like scanning). */
static void put_field(ddmc_buf *b, const char *s) {
  if (s == NULL || *s == '\0') s = "?";
  size_t n = strlen(s);
  uint8_t *p = ddmc__buf_append(b, n);
  if (p == NULL) return;
  for (size_t i = 0; i < n; i++) p[i] = (s[i] == '\t' || s[i] == '\n' || s[i] == '\r') ? ' ' : (uint8_t)s[i];
}

static void put_line(ddmc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_line(ddmc_buf *b, const char *fmt, ...) {
  char tmp[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0) ddmc_buf_put_bytes(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

int ddmc__prof_dmtrace_head(ddmc_buf *b, const ddmc__prof_dmtrace_info *info, const ddmc__prof_dmtrace_thread *threads,
                            size_t nthreads, const ddmc__prof_dmtrace_method *methods, size_t nmethods) {
  put_text(b, "*version\n3\n");
  put_line(b, "data-file-overflow=%s\n", info->overflow ? "true" : "false");
  put_text(b, "clock=dual\n");
  put_line(b, "elapsed-time-usec=%" PRIu64 "\n", info->elapsed_us);
  put_line(b, "num-method-calls=%" PRIu64 "\n", info->records);
  put_line(b, "clock-call-overhead-nsec=%" PRIu32 "\n", info->clock_overhead_ns);
  put_text(b, "vm=dalvik\n*threads\n");
  for (size_t i = 0; i < nthreads; i++) {
    put_line(b, "%" PRIu32 "\t", threads[i].id);
    put_field(b, threads[i].name);
    put_text(b, "\n");
  }
  put_text(b, "*methods\n");
  for (size_t i = 0; i < nmethods; i++) {
    const ddmc__prof_dmtrace_method *m = &methods[i];
    put_line(b, "0x%08" PRIx32 "\t", m->id);
    put_field(b, m->cls);
    put_text(b, "\t");
    put_field(b, m->name);
    put_text(b, "\t");
    put_field(b, m->sig);
    put_text(b, "\t");
    put_field(b, m->file);
    put_line(b, "\t%" PRId32 "\n", m->line);
  }
  put_text(b, "*end\n");
  uint8_t *h = ddmc__buf_append(b, DDMC__TRACE_HDR);
  if (h != NULL) {
    memset(h, 0, DDMC__TRACE_HDR);
    ddmc__prof_le32(h, DDMC__TRACE_MAGIC);
    ddmc__prof_le16(h + 4, DDMC__TRACE_VERSION);
    ddmc__prof_le16(h + 6, DDMC__TRACE_HDR);
    ddmc__prof_le32(h + 8, (uint32_t)info->start_us);
    ddmc__prof_le32(h + 12, (uint32_t)(info->start_us >> 32));
    ddmc__prof_le16(h + 16, DDMC__TRACE_REC);
  }
  return ddmc_buf_error(b);
}
