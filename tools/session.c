/* SPDX-License-Identifier: Apache-2.0 */
/* The ddmc tool's connection to one VM (see session.h). */
#include "session.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define T_HELO DDMC_HOST_FOURCC('H', 'E', 'L', 'O')
#define T_FEAT DDMC_HOST_FOURCC('F', 'E', 'A', 'T')
#define T_FAIL DDMC_HOST_FOURCC('F', 'A', 'I', 'L')
#define T_APNM DDMC_HOST_FOURCC('A', 'P', 'N', 'M')
#define T_WAIT DDMC_HOST_FOURCC('W', 'A', 'I', 'T')
#define T_HPIF DDMC_HOST_FOURCC('H', 'P', 'I', 'F')

volatile sig_atomic_t sess_interrupted;

int64_t sess_mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *sess_tx(const char *str) {
  static char *pool[8];
  static int next;
  size_t need = ddmc_host_term_escape(str, NULL, 0) + 1;
  char *b = realloc(pool[next], need);
  if (b == NULL) return "(out of memory)";
  pool[next] = b;
  next = (next + 1) % 8;
  ddmc_host_term_escape(str, b, need);
  return b;
}

const char *sess_progress_text(char *buf, size_t n, const char *what, uint64_t have, uint64_t total,
                               uint64_t first_have, int64_t elapsed_ms) {
  char rate[64] = "";
  double secs = (double)elapsed_ms / 1000.0;
  /* The time left only after 0.2 s: before that the rate is mostly the first read's luck. */
  if (elapsed_ms > 0 && have > first_have) {
    double bps = (double)(have - first_have) / secs;
    if (have < total && secs < 0.2)
      snprintf(rate, sizeof rate, ", %.1f MiB/s", bps / 1048576.0);
    else if (have < total)
      snprintf(rate, sizeof rate, ", %.1f MiB/s, %.0f s left", bps / 1048576.0, (double)(total - have) / bps + 0.5);
    else
      snprintf(rate, sizeof rate, ", %.1f MiB/s, %.1f s", bps / 1048576.0, secs);
  }
  snprintf(buf, n, "receiving %s: %.1f of %.1f MiB%s", what, have / 1048576.0, total / 1048576.0, rate);
  return buf;
}

/* The line on stderr, redrawn in place on a terminal (the packet's length is known from its
 * header, so the whole is known from the first call). */
static void on_progress(void *ud, uint64_t have, uint64_t total) {
  sess_progress *p = ud;
  int64_t now = sess_mono_ms();
  if (p->first_ms == 0) {
    p->first_ms = now;
    p->first_have = have;
  }
  if (have < total && now - p->last_ms < (p->tty ? 100 : 1000)) return;
  p->last_ms = now;
  char text[300];
  sess_progress_text(text, sizeof text, p->what, have, total, p->first_have, now - p->first_ms);
  fprintf(stderr, "%sddmc: %s%s%s", p->tty ? "\r" : "", text, p->tty ? "\033[K" : "",
          p->tty && have < total ? "" : "\n");
  fflush(stderr);
}

void sess_show_progress(sess *s, sess_progress *p, const char *what) {
  memset(p, 0, sizeof(*p));
  p->what = what;
  p->tty = isatty(2);
  ddmc_host_set_progress(s->h, on_progress, p);
}

static void on_sigint(int sig) {
  (void)sig;
  sess_interrupted = 1;
}

void sess_catch_interrupts(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

void sess_wait_seconds(sess *s, double seconds) {
  sess_catch_interrupts();
  int64_t end = sess_mono_ms() + (int64_t)(seconds * 1000.0);
  while (!sess_interrupted) {
    int64_t left = end - sess_mono_ms();
    if (left <= 0) break;
    sess_pump(s, left > 1000 ? 1000 : (int)left, NULL);
  }
}

/* ---- failure ---------------------------------------------------------------------------------- */

int sess_exit_code(int err) {
  switch (err) {
    case DDMC_ETIMEDOUT: return EXIT_TIMEOUT;
    case DDMC_EPROTO:
    case DDMC_ENOTSUP:
    case DDMC_ETOOBIG: return EXIT_NOT_DDM;
    case DDMC_ECONNREFUSED:
    case DDMC_EADDR: return EXIT_CONNECT;
    default: return EXIT_ERROR;
  }
}

/* One line on stderr. Messages quote what a VM (or an adb server) sent, so the whole line goes
 * through the terminal escaper: a FAIL message with ESC]0;...BEL must not retitle the window. */
static void eprint_line(const char *prefix, const char *msg) {
  char small[1200];
  size_t need = ddmc_host_term_escape(msg, NULL, 0) + 1;
  char *buf = need <= sizeof small ? small : malloc(need);
  if (buf == NULL) {
    fprintf(stderr, "%s(a message too large to show)\n", prefix);
    return;
  }
  ddmc_host_term_escape(msg, buf, need);
  fprintf(stderr, "%s%s\n", prefix, buf);
  if (buf != small) free(buf);
}

void sess_fail(sess *s, int code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fflush(stdout);
  eprint_line("ddmc: ", msg); /* JSON below carries msg as it is: the writer escapes for JSON */
  if (s->o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_obj(&w);
    sess_json_head(s, &w, 0);
    jw_key(&w, "error");
    jw_obj(&w);
    jw_kint(&w, "exit", code);
    jw_kstr(&w, "message", msg);
    jw_close(&w);
    if (s->h) sess_json_wire(s, &w);
    jw_close(&w);
    jw_end(&w);
  } else if (s->o->verbose && s->h) {
    sess_print_wire(s);
  }
  sess_close(s);
  exit(code);
}

/* ---- JSON pieces ------------------------------------------------------------------------------ */

void sess_json_head(sess *s, jw *w, int ok) {
  jw_kstr(w, "command", s->o->command);
  jw_kbool(w, "ok", ok);
  jw_kstr(w, "target", s->o->target);
  if (s->hello_done) sess_json_vm(s, w);
}

void sess_json_vm(sess *s, jw *w) {
  const ddmc_host_helo *h = &s->helo;
  jw_key(w, "vm");
  jw_obj(w);
  jw_kuint(w, "pid", h->pid);
  jw_kstr(w, "vm_ident", h->vm_ident);
  /* The latest name wins: an APNM after HELO (e.g. a zygote child renaming itself). */
  jw_kstr(w, "app_name", s->apnm_seen ? s->apnm.name : h->app_name);
  jw_kstr(w, "app_name_source", s->apnm_seen ? "APNM" : "HELO");
  jw_kstr(w, "app_name_at_hello", h->app_name);
  jw_key(w, "user_id");
  if (s->apnm_seen && s->apnm.has_user_id) jw_int(w, s->apnm.user_id);
  else if (h->present & DDMC_HOST_HELO_USER_ID) jw_int(w, h->user_id);
  else jw_null(w);
  jw_kstr(w, "package", s->apnm_seen && s->apnm.pkg_name ? s->apnm.pkg_name : h->pkg_name);
  jw_kstr(w, "abi", h->abi);
  jw_kstr(w, "jvm_flags", h->jvm_flags);
  jw_key(w, "native_debuggable");
  if (h->present & DDMC_HOST_HELO_NATIVE_DEBUGGABLE) jw_bool(w, h->native_debuggable);
  else jw_null(w);
  jw_kuint(w, "protocol_version", h->version);
  jw_key(w, "features");
  if (h->present & DDMC_HOST_HELO_FEATURES) {
    jw_arr(w);
    for (size_t i = 0; i < h->n_features; i++) jw_str(w, h->features[i]);
    jw_close(w);
  } else {
    jw_null(w);
  }
  jw_kbool(w, "waiting_for_debugger", s->waiting);
  jw_close(w);
}

void sess_json_open(sess *s, jw *w, const char *key) {
  jw_init(w, stdout);
  jw_obj(w);
  sess_json_head(s, w, 1);
  jw_key(w, key);
  jw_obj(w);
}

int sess_json_close(sess *s, jw *w) {
  jw_close(w);
  sess_json_wire(s, w);
  jw_close(w);
  return jw_end(w) == 0 ? EXIT_OK : EXIT_ERROR;
}

void sess_json_wire(sess *s, jw *w) {
  ddmc_host_stats st;
  memset(&st, 0, sizeof st);
  if (s->h) ddmc_host_stats_get(s->h, &st);
  jw_key(w, "wire");
  jw_obj(w);
  jw_kuint(w, "bytes_in", st.bytes_in);
  jw_kuint(w, "bytes_out", st.bytes_out);
  jw_kuint(w, "packets_in", st.packets_in);
  jw_kuint(w, "packets_out", st.packets_out);
  jw_key(w, "zlib");
  jw_obj(w);
  jw_kbool(w, "opted_in", s->zlib_sent);
  jw_kbool(w, "vm_answered", s->zlib_answered);
  jw_kuint(w, "chunks", st.zlib_chunks_in);
  jw_kuint(w, "raw_bytes", st.zlib_in_raw);
  jw_kuint(w, "wire_bytes", st.zlib_in_wire);
  jw_close(w);
  jw_close(w);
}

void sess_print_wire(sess *s) {
  ddmc_host_stats st;
  memset(&st, 0, sizeof st);
  if (s->h) ddmc_host_stats_get(s->h, &st);
  fprintf(stderr, "ddmc: wire: %llu bytes in (%llu packets), %llu bytes out (%llu packets)",
          (unsigned long long)st.bytes_in, (unsigned long long)st.packets_in, (unsigned long long)st.bytes_out,
          (unsigned long long)st.packets_out);
  if (st.zlib_chunks_in)
    fprintf(stderr, "; zlib: %llu chunks, %llu bytes inflated from %llu (%.1fx)", (unsigned long long)st.zlib_chunks_in,
            (unsigned long long)st.zlib_in_raw, (unsigned long long)st.zlib_in_wire,
            st.zlib_in_wire ? (double)st.zlib_in_raw / (double)st.zlib_in_wire : 0.0);
  else
    fprintf(stderr, "; zlib: %s", s->zlib_sent ? "opted in, no compressed chunk received" : "off");
  fputc('\n', stderr);
}

/* ---- packets ---------------------------------------------------------------------------------- */

static void vlog(sess *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void vlog(sess *s, const char *fmt, ...) {
  if (s->o->verbose < 2) return;
  char msg[1024], prefix[40];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(prefix, sizeof prefix, "ddmc: [%6lld ms] ", (long long)(sess_mono_ms() - s->t0_ms));
  eprint_line(prefix, msg);
}

void sess_dispatch(sess *s, const ddmc_host_packet *p) {
  char t[5];
  s->unsolicited++;
  if (p->is_reply) {
    /* The answer to the ZLIB opt-in when it was not waited for, or a late reply. */
    if (s->zlib_sent && p->id == ddmc_host_last_id(s->h)) s->zlib_answered = 1;
    vlog(s, "reply id 0x%08x ignored", (unsigned)p->id);
    return;
  }
  if (!p->is_ddm) {
    vlog(s, "JDWP command %u/%u from the VM ignored", p->cmd_set, p->cmd);
    return;
  }
  vlog(s, "%s %zu bytes%s", ddmc_host_fourcc_str(p->chunk_type, t), p->chunk_len,
       p->was_compressed ? " (was ZLIB)" : "");
  int rc = 0;
  if (p->chunk_type == T_APNM) {
    ddmc_host_apnm a;
    rc = ddmc_host_apnm_parse(p->chunk, p->chunk_len, &a);
    if (rc == 0) {
      ddmc_host_apnm_free(&s->apnm);
      s->apnm = a;
      s->apnm_seen = 1;
    }
  } else if (p->chunk_type == T_WAIT) {
    uint8_t reason;
    rc = ddmc_host_wait_parse(p->chunk, p->chunk_len, &reason);
    if (rc == 0) s->waiting = 1;
  } else if (p->chunk_type == T_HPIF) {
    ddmc_host_hpif hp;
    rc = ddmc_host_hpif_parse(p->chunk, p->chunk_len, &hp);
    if (rc == 0 && hp.count > 0) {
      s->hpif = hp.heaps[0];
      s->hpif_seq++;
      if (s->on_hpif) s->on_hpif(s->ud, &s->hpif);
    }
    ddmc_host_hpif_free(&hp);
  } else if (s->track_threads) {
    ddmc_host_thread_event ev;
    uint32_t id, gone;
    /* THDE removes the entry: keep its name for the observer. */
    char *name = NULL;
    if (p->chunk_type == DDMC_HOST_FOURCC('T', 'H', 'D', 'E') && s->on_thread_event &&
        ddmc_host_thde_parse(p->chunk, p->chunk_len, &gone) == 0) {
      const ddmc_host_thread *t = ddmc_host_threads_find(&s->threads, gone);
      if (t && t->named) name = strdup(t->name);
    }
    rc = ddmc_host_threads_feed(&s->threads, p, &ev, &id);
    if (rc == 0 && ev != DDMC_HOST_TEV_NONE && s->on_thread_event) {
      const ddmc_host_thread *t = ev == DDMC_HOST_TEV_ENDED ? NULL : ddmc_host_threads_find(&s->threads, id);
      s->on_thread_event(s->ud, ev, id, t && t->named ? t->name : name);
    }
    free(name);
  }
  if (rc == 0 && s->track_heap) {
    rc = ddmc_host_heapdump_feed(&s->dump, p);
    if (rc == 1) {
      s->dump_done_seq = s->hpif_seq;
      rc = 0;
    }
  }
  if (rc == DDMC_ENOMEM) sess_fail(s, EXIT_ERROR, "out of memory");
  if (rc) sess_fail(s, EXIT_NOT_DDM, "malformed %s chunk from the VM: %s", ddmc_host_fourcc_str(p->chunk_type, t),
                    ddmc_host_strerror(rc));
}

static void recv_failed(sess *s, int rc) {
  if (rc == DDMC_ECLOSED) sess_fail(s, EXIT_ERROR, "the VM closed the connection");
  sess_fail(s, sess_exit_code(rc), "receive failed: %s", ddmc_host_strerror(rc));
}

int sess_pump(sess *s, int ms, int (*stop)(sess *s)) {
  int64_t deadline = sess_mono_ms() + ms;
  for (;;) {
    if (stop && stop(s)) return 1;
    if (sess_interrupted) return 0;
    int64_t left = deadline - sess_mono_ms();
    if (left <= 0) return 0;
    /* Short slices so SIGINT is noticed promptly (poll restarts after EINTR inside the library). */
    ddmc_host_packet p;
    int rc = ddmc_host_recv(s->h, &p, left > 100 ? 100 : (int)left);
    if (rc == DDMC_ETIMEDOUT) continue;
    if (rc) recv_failed(s, rc);
    sess_dispatch(s, &p);
  }
}

void sess_drain(sess *s) {
  for (;;) {
    ddmc_host_packet p;
    int rc = ddmc_host_recv(s->h, &p, 0);
    if (rc == DDMC_ETIMEDOUT) return;
    if (rc) recv_failed(s, rc);
    sess_dispatch(s, &p);
  }
}

int sess_request(sess *s, const char *what, uint32_t type, const void *data, size_t len,
                 int (*parse)(void *ud, const ddmc_host_packet *reply), void *ud) {
  ddmc_host_packet r;
  char t[5];
  int rc = ddmc_host_request(s->h, type, data, len, &r, s->o->timeout_ms);
  if (rc == DDMC_ETIMEDOUT)
    sess_fail(s, EXIT_TIMEOUT, "the VM did not answer %s (%s) within %d ms", what, ddmc_host_fourcc_str(type, t),
              s->o->timeout_ms);
  if (rc == DDMC_ECLOSED) sess_fail(s, EXIT_ERROR, "the VM closed the connection during %s", what);
  if (rc) sess_fail(s, sess_exit_code(rc), "%s failed: %s", what, ddmc_host_strerror(rc));
  if (r.is_reply && r.error != 0)
    sess_fail(s, EXIT_NOT_DDM, "the VM answered %s with JDWP error %u", what, (unsigned)r.error);
  if (r.is_ddm && r.chunk_type == T_FAIL) {
    ddmc_host_fail f;
    if (ddmc_host_fail_parse(r.chunk, r.chunk_len, &f) == 0) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", f.msg ? f.msg : "");
      int32_t code = f.code;
      ddmc_host_fail_free(&f);
      sess_fail(s, EXIT_FAIL, "the VM refused %s: %s (FAIL code %d)", what, msg, (int)code);
    }
    sess_fail(s, EXIT_FAIL, "the VM refused %s (malformed FAIL chunk)", what);
  }
  rc = parse ? parse(ud, &r) : 0;
  sess_drain(s);
  return rc;
}

/* ---- open/close ------------------------------------------------------------------------------- */

void sess_open(sess *s, const opts *o) {
  memset(s, 0, sizeof *s);
  s->o = o;
  s->t0_ms = sess_mono_ms();
  ddmc_host_threads_init(&s->threads);
  ddmc_host_heapdump_init(&s->dump, 0);
  int rc;
  if (o->pid) {
    char why[300];
    rc = ddmc_host_connect_adb(&s->h, "127.0.0.1", o->adb_port, o->serial, o->pid, o->timeout_ms, why, sizeof why);
    if (rc == DDMC_ENOENT) {
      s->h = NULL;
      sess_fail(s, EXIT_CONNECT, "cannot reach %s: adb says %s", o->target, why);
    }
    if (rc == DDMC_EPROTO) {
      s->h = NULL;
      sess_fail(s, EXIT_CONNECT, "cannot reach %s: 127.0.0.1:%u is not an adb server", o->target,
                (unsigned)o->adb_port);
    }
  } else {
    rc = ddmc_host_connect_tcp(&s->h, o->host, o->port, o->timeout_ms);
  }
  if (rc) {
    const char *why = rc == DDMC_ECONNREFUSED ? "connection refused"
                      : rc == DDMC_EADDR      ? "unknown host"
                      : rc == DDMC_ETIMEDOUT  ? "connect timed out"
                                              : ddmc_host_strerror(rc);
    s->h = NULL;
    sess_fail(s, EXIT_CONNECT, "cannot connect to %s: %s", o->target, why);
  }
  vlog(s, "connected to %s", o->target);
  rc = ddmc_host_handshake(s->h, o->timeout_ms);
  if (rc == DDMC_EPROTO)
    sess_fail(s, EXIT_NOT_DDM, "%s is not a JDWP VM: it answered the JDWP handshake with something else", o->target);
  if (rc == DDMC_ECLOSED)
    sess_fail(s, EXIT_NOT_DDM,
              "%s closed the connection during the JDWP handshake (not a JDWP VM, or another debugger is attached)",
              o->target);
  if (rc == DDMC_ETIMEDOUT)
    sess_fail(s, EXIT_NOT_DDM, "%s did not answer the JDWP handshake within %d ms: not a JDWP VM?", o->target,
              o->timeout_ms);
  if (rc) sess_fail(s, sess_exit_code(rc), "JDWP handshake with %s failed: %s", o->target, ddmc_host_strerror(rc));
  vlog(s, "handshake done");
  rc = ddmc_host_hello(s->h, &s->helo, o->timeout_ms);
  if (rc == DDMC_ETIMEDOUT)
    sess_fail(s, EXIT_TIMEOUT, "%s completed the JDWP handshake but did not answer HELO within %d ms", o->target,
              o->timeout_ms);
  if (rc == DDMC_ENOTSUP)
    sess_fail(s, EXIT_NOT_DDM, "%s is a JDWP VM but not DDM-aware (HELO got no DDM answer)", o->target);
  if (rc == DDMC_EPROTO) sess_fail(s, EXIT_NOT_DDM, "%s sent a malformed HELO reply", o->target);
  if (rc == DDMC_ECLOSED) sess_fail(s, EXIT_ERROR, "%s closed the connection after the handshake", o->target);
  if (rc) sess_fail(s, sess_exit_code(rc), "HELO to %s failed: %s", o->target, ddmc_host_strerror(rc));
  s->hello_done = 1;
  vlog(s, "HELO: pid %u, %s", (unsigned)s->helo.pid, s->helo.vm_ident);
  if (o->zlib) {
    rc = ddmc_host_opt_in_zlib(s->h);
    if (rc) sess_fail(s, sess_exit_code(rc), "sending the ZLIB opt-in failed: %s", ddmc_host_strerror(rc));
    s->zlib_sent = 1;
    /* Wait for its reply (whatever it holds) so later compressed chunks are expected; a VM that
     * ignores ZLIB still answers, and one that never does only costs the timeout. */
    uint32_t id = ddmc_host_last_id(s->h);
    int64_t deadline = sess_mono_ms() + o->timeout_ms;
    while (!s->zlib_answered) {
      int64_t left = deadline - sess_mono_ms();
      if (left <= 0) break;
      ddmc_host_packet p;
      rc = ddmc_host_recv(s->h, &p, (int)left);
      if (rc == DDMC_ETIMEDOUT) break;
      if (rc) recv_failed(s, rc);
      if (p.is_reply && p.id == id) s->zlib_answered = 1;
      else sess_dispatch(s, &p);
    }
    vlog(s, "ZLIB opt-in %s", s->zlib_answered ? "answered" : "not answered");
  }
}

void sess_close(sess *s) {
  ddmc_host_free(s->h);
  s->h = NULL;
  ddmc_host_helo_free(&s->helo);
  ddmc_host_apnm_free(&s->apnm);
  ddmc_host_threads_free(&s->threads);
  ddmc_host_heapdump_free(&s->dump);
}
