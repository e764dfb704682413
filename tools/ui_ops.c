/* SPDX-License-Identifier: Apache-2.0 */
/* What a `ddmc ui` page asks the VM for, run by the worker (ui_vm.h's mailbox): a thread's stack
 * (STKL), a collection (HPGC), the allocation tracker (REAE, REAL), a method trace or sampling
 * (MPSS/SPSS, MPSE/SPSE: collapsed stacks through export_collapsed) and the heap map (HPSG and
 * HPGC, drawn by heapimg.c). Each answers with an HTTP status and a body (ui_vm_result). */
#include "ui_vm_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "heapimg.h"
#include "ui_hprof.h"

#define T_STKL DDMC_HOST_FOURCC('S', 'T', 'K', 'L')
#define T_HPGC DDMC_HOST_FOURCC('H', 'P', 'G', 'C')
#define T_HPIF DDMC_HOST_FOURCC('H', 'P', 'I', 'F')
#define T_HPSG DDMC_HOST_FOURCC('H', 'P', 'S', 'G')
#define T_REAE DDMC_HOST_FOURCC('R', 'E', 'A', 'E')
#define T_REAL DDMC_HOST_FOURCC('R', 'E', 'A', 'L')
#define T_MPSS DDMC_HOST_FOURCC('M', 'P', 'S', 'S')
#define T_MPSE DDMC_HOST_FOURCC('M', 'P', 'S', 'E')
#define T_SPSS DDMC_HOST_FOURCC('S', 'P', 'S', 'S')
#define T_SPSE DDMC_HOST_FOURCC('S', 'P', 'S', 'E')
#define T_HPDS DDMC_HOST_FOURCC('H', 'P', 'D', 'S')

/* The largest heap dump the page takes, and the classes its histogram lists. */
#define HPROF_MAX_BYTES (512u << 20)
#define HISTOGRAM_ROWS 2000

/* The VM's trace buffer (MPSS/SPSS): enough for a minute of sampling. */
#define TRACE_BUFFER_BYTES (8u << 20)

static const char k_json[] = "application/json";
static const char k_text[] = "text/plain; charset=utf-8";

static void set_text(ui_vm_result *r, int status, const char *msg) {
  r->status = status;
  r->ctype = k_text;
  r->body = strdup(msg);
  r->len = r->body ? strlen(r->body) : 0;
}

/* Takes a memstream's buffer as the result (500 when the stream failed). */
static void set_stream(ui_vm_result *r, FILE *f, char **buf, size_t *len, const char *ctype) {
  int bad = ferror(f);
  if (fclose(f) != 0 || bad || *buf == NULL) {
    free(*buf);
    set_text(r, 500, "out of memory");
    return;
  }
  r->status = 200;
  r->ctype = ctype;
  r->body = *buf;
  r->len = *len;
}

static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* A request whose reply says nothing: 200 "ok", or why not. */
static int simple(ui_vm *v, ui_vm_result *r, uint32_t type, const void *data, size_t len) {
  char err[300];
  int rc = ui_vm_request(v, type, data, len, v->o->timeout_ms, NULL, err, sizeof err);
  if (rc != 0) {
    set_text(r, rc == DDMC_ETIMEDOUT ? 504 : 502, err);
    return -1;
  }
  set_text(r, 200, "ok");
  return 0;
}

/* ---- stack ------------------------------------------------------------------------------------ */

typedef struct stack_take {
  ddmc_host_stkl st;
  int ok;
} stack_take;
static stack_take g_stack; /* the worker's only; reset around each use */

static void take_stkl(ui_vm *v, const ddmc_host_packet *p) {
  (void)v;
  g_stack.ok = p->is_ddm && p->chunk_type == T_STKL && ddmc_host_stkl_parse(p->chunk, p->chunk_len, &g_stack.st) == 0;
}

static void op_stack(ui_vm *v, const char *arg, ui_vm_result *r) {
  char *end;
  unsigned long id = strtoul(arg, &end, 10);
  if (!arg[0] || *end || id > UINT32_MAX) {
    set_text(r, 400, "stack needs a thread id");
    return;
  }
  uint8_t req[4];
  put_be32(req, (uint32_t)id);
  char err[300];
  memset(&g_stack, 0, sizeof g_stack);
  int rc = ui_vm_request(v, T_STKL, req, 4, v->o->timeout_ms, take_stkl, err, sizeof err);
  if (rc != 0 || !g_stack.ok) {
    set_text(r, rc == DDMC_ETIMEDOUT ? 504 : 502, rc ? err : "malformed STKL reply");
    return;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (f == NULL) {
    ddmc_host_stkl_free(&g_stack.st);
    set_text(r, 500, "out of memory");
    return;
  }
  jw w;
  jw_init(&w, f);
  w.compact = 1;
  jw_obj(&w);
  jw_kuint(&w, "thread", g_stack.st.thread_id);
  jw_key(&w, "frames");
  jw_arr(&w);
  for (size_t i = 0; i < g_stack.st.count; i++) {
    const ddmc_host_frame *fr = &g_stack.st.frames[i];
    jw_obj(&w);
    jw_kstr(&w, "class", fr->class_name);
    jw_kstr(&w, "method", fr->method);
    jw_kstr(&w, "file", fr->file);
    jw_kint(&w, "line", fr->line);
    jw_close(&w);
  }
  jw_close(&w);
  jw_close(&w);
  jw_end(&w);
  ddmc_host_stkl_free(&g_stack.st);
  set_stream(r, f, &buf, &len, k_json);
}

/* ---- allocations ------------------------------------------------------------------------------ */

typedef struct real_take {
  uint8_t *data;
  size_t len;
} real_take;
static real_take g_real;

static void take_real(ui_vm *v, const ddmc_host_packet *p) {
  (void)v;
  if (!p->is_ddm || p->chunk_type != T_REAL) return;
  if ((g_real.data = malloc(p->chunk_len ? p->chunk_len : 1)) == NULL) return;
  memcpy(g_real.data, p->chunk, p->chunk_len);
  g_real.len = p->chunk_len;
}

/* "Class.method(File.java:12)", as Java prints a frame. */
static void frame_text(const ddmc_host_alloc_frame *f, char *out, size_t n) {
  char *cls = ddmc_host_descriptor_to_dot(f->cls);
  const char *c = cls ? cls : "?";
  if (f->line == -2)
    snprintf(out, n, "%s.%s(Native Method)", c, f->method);
  else if (f->file[0] == '\0')
    snprintf(out, n, "%s.%s(Unknown Source)", c, f->method);
  else if (f->line < 0)
    snprintf(out, n, "%s.%s(%s)", c, f->method, f->file);
  else
    snprintf(out, n, "%s.%s(%s:%d)", c, f->method, f->file, f->line);
  free(cls);
}

/* Every record: class, size, thread, innermost frame; the page groups them into sites and types. */
static void allocs_json(jw *w, const ddmc_host_allocs *al) {
  jw_key(w, "records");
  jw_arr(w);
  for (size_t i = 0; i < al->count; i++) {
    const ddmc_host_alloc *a = &al->entries[i];
    char where[600];
    if (a->depth)
      frame_text(&a->frames[0], where, sizeof where);
    else
      snprintf(where, sizeof where, "(no frames)");
    char *cls = ddmc_host_descriptor_to_dot(a->cls);
    jw_obj(w);
    jw_kstr(w, "class", cls ? cls : a->cls);
    jw_kstr(w, "site", where);
    jw_kuint(w, "size", a->size);
    jw_kuint(w, "thread", a->thread);
    jw_close(w);
    free(cls);
  }
  jw_close(w);
}

static void op_alloc_report(ui_vm *v, ui_vm_result *r) {
  char err[300];
  memset(&g_real, 0, sizeof g_real);
  int rc = ui_vm_request(v, T_REAL, NULL, 0, v->o->timeout_ms, take_real, err, sizeof err);
  ddmc_host_allocs al;
  if (rc != 0 || g_real.data == NULL || ddmc_host_real_parse(g_real.data, g_real.len, &al) != 0) {
    free(g_real.data);
    set_text(r, rc == DDMC_ETIMEDOUT ? 504 : 502, rc ? err : "no or malformed REAL report");
    return;
  }
  free(v->kept_real); /* the page's download is of the report it shows */
  v->kept_real = g_real.data;
  v->kept_real_len = g_real.len;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (f == NULL) {
    ddmc_host_allocs_free(&al);
    set_text(r, 500, "out of memory");
    return;
  }
  jw w;
  jw_init(&w, f);
  w.compact = 1;
  jw_obj(&w);
  jw_kbool(&w, "tracking", v->tracking_allocs);
  allocs_json(&w, &al);
  jw_close(&w);
  jw_end(&w);
  ddmc_host_allocs_free(&al);
  set_stream(r, f, &buf, &len, k_json);
}

/* ---- traces ----------------------------------------------------------------------------------- */

static void op_trace_start(ui_vm *v, const char *arg, ui_vm_result *r) {
  char *end;
  unsigned long us = strtoul(arg, &end, 10);
  if (!arg[0] || *end || us > 60000000) {
    set_text(r, 400, "trace-start needs a sampling interval in microseconds (0: every method)");
    return;
  }
  uint8_t req[12];
  put_be32(req, TRACE_BUFFER_BYTES);
  put_be32(req + 4, 0);
  put_be32(req + 8, (uint32_t)us);
  if (simple(v, r, us ? T_SPSS : T_MPSS, req, us ? 12 : 8) == 0) {
    v->tracing = 1;
    v->trace_interval_us = (uint32_t)us;
  }
}

/* arg: the clock the stacks are counted in ("" as "auto": wall when the trace has it). */
static void op_trace_stop(ui_vm *v, const char *arg, ui_vm_result *r) {
  export_clock clock;
  if (export_clock_parse(arg[0] ? arg : "auto", &clock) != 0) {
    set_text(r, 400, "trace-stop takes a clock: wall, cpu (each thread's CPU time) or auto");
    return;
  }
  free(v->trace_data);
  v->trace_data = NULL;
  char err[300];
  /* The trace comes as an MPSE chunk before the reply; it is built first, so allow a while. */
  int tmo = v->o->timeout_ms < 60000 ? 60000 : v->o->timeout_ms;
  int rc = ui_vm_request(v, v->trace_interval_us ? T_SPSE : T_MPSE, NULL, 0, tmo, NULL, err, sizeof err);
  v->tracing = 0;
  ddmc_host_trace tr;
  if (rc != 0 || v->trace_data == NULL) {
    set_text(r, rc == DDMC_ETIMEDOUT ? 504 : 502, rc ? err : "the VM sent no trace");
    return;
  }
  rc = ddmc_host_trace_parse(v->trace_data, v->trace_len, &tr);
  free(v->kept_trace); /* the page's downloads are of the trace it shows, in its clock */
  v->kept_trace = rc == 0 ? v->trace_data : NULL;
  v->kept_trace_len = rc == 0 ? v->trace_len : 0;
  v->kept_trace_clock = clock;
  if (rc != 0) free(v->trace_data);
  v->trace_data = NULL;
  if (rc != 0) {
    set_text(r, 502, "the VM's trace is malformed");
    return;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  int erc = f ? export_collapsed(f, &tr, clock) : DDMC_ENOMEM;
  ddmc_host_trace_free(&tr);
  if (erc != 0) {
    if (f) fclose(f);
    free(buf);
    /* DDMC_EINVAL, the only refusal of a parsed trace: the clock is not in it */
    if (erc == DDMC_EINVAL)
      set_text(r, 502, clock == EXPORT_CLOCK_CPU ? "the VM's trace has no thread CPU clock" : "the VM's trace has no wall clock");
    else
      set_text(r, 500, "cannot convert the trace");
    return;
  }
  set_stream(r, f, &buf, &len, k_text);
}

/* ---- the heap map ----------------------------------------------------------------------------- */

/* HPSG on, HPIF at the next GC, HPGC; waits (bounded) for the dump; HPSG off. */
static int collect_dump(ui_vm *v, char *err, size_t errlen) {
  uint8_t on[2] = {1, 0}, off[2] = {0, 0}, next_gc = 2;
  uint64_t seq = v->dump_seq;
  int rc = ui_vm_request(v, T_HPSG, on, 2, v->o->timeout_ms, NULL, err, errlen);
  if (rc == 0) rc = ui_vm_request(v, T_HPIF, &next_gc, 1, v->o->timeout_ms, NULL, err, errlen);
  if (rc == 0) rc = ui_vm_request(v, T_HPGC, NULL, 0, v->o->timeout_ms, NULL, err, errlen);
  int64_t end = sess_mono_ms() + 30000;
  while (rc == 0 && v->dump_seq == seq && !v->lost && sess_mono_ms() < end) ui_vm_drain(v, 100);
  if (!v->lost) ui_vm_request(v, T_HPSG, off, 2, v->o->timeout_ms, NULL, err, errlen);
  if (rc == 0 && v->dump_seq == seq) {
    snprintf(err, errlen, "no complete heap dump within 30 s");
    rc = DDMC_ETIMEDOUT;
  }
  return rc;
}

static int read_file(const char *path, char **buf, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return -1;
  char *b = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&b, &n);
  char chunk[8192];
  size_t k;
  while (m != NULL && (k = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, k, m);
  int bad = ferror(f) || m == NULL;
  fclose(f);
  if (m != NULL && fclose(m) != 0) bad = 1;
  if (bad) {
    free(b);
    return -1;
  }
  *buf = b;
  *len = n;
  return 0;
}

static void op_heapmap(ui_vm *v, ui_vm_result *r) {
  char err[300];
  int rc = collect_dump(v, err, sizeof err);
  if (rc != 0) {
    set_text(r, rc == DDMC_ETIMEDOUT ? 504 : 502, err);
    return;
  }
  char path[] = "/tmp/ddmc-ui-heap-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    set_text(r, 500, "cannot make a temporary file");
    return;
  }
  close(fd);
  char *buf = NULL;
  size_t len = 0;
  if (heapimg_write_png(path, &v->dump, 512, HEAPIMG_DEFAULT_MAX_PIXELS, NULL, err, sizeof err) != 0 ||
      read_file(path, &buf, &len) != 0) {
    unlink(path);
    set_text(r, 500, "cannot draw the heap map");
    return;
  }
  unlink(path);
  r->status = 200;
  r->ctype = "image/png";
  r->body = buf;
  r->len = len;
}

/* ---- the class histogram ---------------------------------------------------------------------- */

/* HPDS: the VM stops its threads, builds the dump and sends it as an HPDS chunk before the reply. */
static void op_hprof(ui_vm *v, ui_vm_result *r) {
  free(v->hprof_data);
  v->hprof_data = NULL;
  char err[300];
  int tmo = v->o->timeout_ms < 60000 ? 60000 : v->o->timeout_ms;
  ddmc_host_set_max_packet(v->h, HPROF_MAX_BYTES + 64);
  int rc = ui_vm_request(v, T_HPDS, NULL, 0, tmo, NULL, err, sizeof err);
  if (v->h) ddmc_host_set_max_packet(v->h, DDMC_HOST_DEFAULT_MAX_PACKET);
  if (rc != 0 || v->hprof_data == NULL) {
    set_text(r, rc == DDMC_ETIMEDOUT ? 504 : 502, rc ? err : "the VM sent no heap dump");
    return;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  rc = f ? ui_hprof_histogram(v->hprof_data, v->hprof_len, f, HISTOGRAM_ROWS) : DDMC_ENOMEM;
  free(v->hprof_data);
  v->hprof_data = NULL;
  if (rc != 0) {
    if (f) fclose(f);
    free(buf);
    set_text(r, rc == DDMC_EPROTO ? 502 : 500, rc == DDMC_EPROTO ? "the VM's heap dump is malformed" : "out of memory");
    return;
  }
  set_stream(r, f, &buf, &len, k_json);
}

/* ---- picking a VM (--all, -p) ---------------------------------------------------------------- */

static void op_pick(ui_vm *v, const char *arg, ui_vm_result *r) {
  char *end;
  unsigned long pid = strtoul(arg, &end, 10);
  if (v->list == NULL && v->o->pid == 0) {
    set_text(r, 400, "pick goes with ddmc ui --all or -p PID (VMs through adb)");
  } else if (!arg[0] || *end || pid == 0 || pid > INT32_MAX) {
    set_text(r, 400, "pick needs a pid");
  } else {
    ui_vm_pick(v, (uint32_t)pid);
    set_text(r, 200, "ok");
  }
}

/* ---- the table -------------------------------------------------------------------------------- */

void ui_ops_run(ui_vm *v, const char *op, const char *arg, ui_vm_result *r) {
  uint8_t on = 1, off = 0;
  if (strcmp(op, "export") == 0) {
    ui_export_run(v, arg, r); /* what the page holds: no VM needed */
  } else if (strcmp(op, "pick") == 0) {
    op_pick(v, arg, r);
  } else if (v->h == NULL) {
    set_text(r, 409, v->error[0] ? v->error : "not connected to the VM");
  } else if (strcmp(op, "stack") == 0) {
    op_stack(v, arg, r);
  } else if (strcmp(op, "gc") == 0) {
    simple(v, r, T_HPGC, NULL, 0);
  } else if (strcmp(op, "alloc-start") == 0) {
    if (simple(v, r, T_REAE, &on, 1) == 0) v->tracking_allocs = 1;
  } else if (strcmp(op, "alloc-stop") == 0) {
    if (simple(v, r, T_REAE, &off, 1) == 0) v->tracking_allocs = 0;
  } else if (strcmp(op, "alloc") == 0) {
    op_alloc_report(v, r);
  } else if (strcmp(op, "trace-start") == 0) {
    op_trace_start(v, arg, r);
  } else if (strcmp(op, "trace-stop") == 0) {
    op_trace_stop(v, arg, r);
  } else if (strcmp(op, "heapmap") == 0) {
    op_heapmap(v, r);
  } else if (strcmp(op, "hprof") == 0) {
    op_hprof(v, r);
  } else {
    set_text(r, 404, "no such operation");
  }
}
