/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc send TYPE [HEX...] [--listen SECS]: one raw chunk and its reply, then optionally the
 * unsolicited chunks the VM sends (an app's DdmServer.sendChunk). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_FAIL DDMC_HOST_FOURCC('F', 'A', 'I', 'L')

static void hexdump(FILE *f, const uint8_t *p, size_t n) {
  for (size_t off = 0; off < n; off += 16) {
    fprintf(f, "  %08zx ", off);
    for (size_t i = 0; i < 16; i++) {
      if (i == 8) fputc(' ', f);
      if (off + i < n)
        fprintf(f, " %02x", p[off + i]);
      else
        fputs("   ", f);
    }
    fputs("  |", f);
    for (size_t i = 0; i < 16 && off + i < n; i++) fputc(p[off + i] >= 0x20 && p[off + i] < 0x7f ? p[off + i] : '.', f);
    fputs("|\n", f);
  }
}

static void json_hex(jw *w, const char *key, const uint8_t *p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  jw_key(w, key);
  char *s = malloc(2 * n + 1);
  if (s == NULL) {
    jw_null(w);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    s[2 * i] = digits[p[i] >> 4];
    s[2 * i + 1] = digits[p[i] & 15];
  }
  jw_strn(w, s, 2 * n);
  free(s);
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* send --listen: the unsolicited DDM chunks the VM sends within listen_ms after the reply (an
 * app's DdmServer.sendChunk, say), text or JSON array; queued ones first. */
static void listen_unsolicited(sess *s, jw *w, int listen_ms) {
  if (w) {
    jw_key(w, "unsolicited");
    jw_arr(w);
  }
  int64_t deadline = sess_mono_ms() + listen_ms;
  for (int64_t left; (left = deadline - sess_mono_ms()) > 0;) {
    ddmc_host_packet p;
    if (ddmc_host_recv(s->h, &p, (int)left) != 0) break;
    if (p.is_reply || !p.is_ddm) continue;
    char t[5];
    ddmc_host_fourcc_str(p.chunk_type, t);
    if (w) {
      jw_obj(w);
      jw_kstr(w, "type", t);
      jw_kuint(w, "length", p.chunk_len);
      json_hex(w, "hex", p.chunk, p.chunk_len);
      jw_close(w);
    } else {
      printf("unsolicited %s, %zu bytes\n", t, p.chunk_len);
      hexdump(stdout, p.chunk, p.chunk_len);
    }
  }
  if (w) jw_close(w);
}

static int send_run(sess *s, const char *type_s, uint8_t *data, size_t len, int listen_ms) {
  uint32_t type = DDMC_HOST_FOURCC(type_s[0], type_s[1], type_s[2], type_s[3]);
  ddmc_host_packet r;
  int rc = ddmc_host_request(s->h, type, data, len, &r, s->o->timeout_ms);
  if (rc == DDMC_ETIMEDOUT) sess_fail(s, EXIT_TIMEOUT, "no reply to %s within %d ms", type_s, s->o->timeout_ms);
  if (rc == DDMC_ECLOSED) sess_fail(s, EXIT_ERROR, "the VM closed the connection (no reply to %s)", type_s);
  if (rc) sess_fail(s, sess_exit_code(rc), "sending %s failed: %s", type_s, ddmc_host_strerror(rc));
  char t[5] = "";
  int fail = 0;
  ddmc_host_fail f = {0, NULL};
  if (r.is_ddm) {
    ddmc_host_fourcc_str(r.chunk_type, t);
    if (r.chunk_type == T_FAIL && ddmc_host_fail_parse(r.chunk, r.chunk_len, &f) == 0) fail = 1;
  }
  int code = fail || (r.is_ddm && r.chunk_type == T_FAIL) ? EXIT_FAIL : EXIT_OK;
  if (s->o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_obj(&w);
    sess_json_head(s, &w, code == EXIT_OK);
    jw_key(&w, "request");
    jw_obj(&w);
    jw_kstr(&w, "type", type_s);
    jw_kuint(&w, "length", len);
    json_hex(&w, "hex", data, len);
    jw_close(&w);
    jw_kuint(&w, "jdwp_error", r.error);
    jw_key(&w, "reply");
    if (r.is_ddm) {
      jw_obj(&w);
      jw_kstr(&w, "type", t);
      jw_kuint(&w, "length", r.chunk_len);
      jw_kbool(&w, "compressed", r.was_compressed);
      json_hex(&w, "hex", r.chunk, r.chunk_len);
      if (fail) {
        jw_key(&w, "fail");
        jw_obj(&w);
        jw_kint(&w, "code", f.code);
        jw_kstr(&w, "message", f.msg);
        jw_close(&w);
      }
      jw_close(&w);
    } else {
      jw_null(&w);
    }
    jw_kbool(&w, "empty", !r.is_ddm);
    ddmc_host_fail_free(&f);
    if (listen_ms > 0) listen_unsolicited(s, &w, listen_ms);
    cli_json_finish(s, &w);
    return code;
  }
  if (r.error) {
    printf("JDWP error reply %u\n", (unsigned)r.error);
  } else if (!r.is_ddm) {
    printf("empty reply\n");
  } else {
    printf("reply %s, %zu bytes%s\n", t, r.chunk_len, r.was_compressed ? " (arrived ZLIB-compressed)" : "");
    hexdump(stdout, r.chunk, r.chunk_len);
    if (fail) printf("FAIL code %d: %s\n", (int)f.code, sess_tx(f.msg));
  }
  ddmc_host_fail_free(&f);
  if (listen_ms > 0) listen_unsolicited(s, NULL, listen_ms);
  cli_finish_text(s);
  if (code == EXIT_FAIL) fprintf(stderr, "ddmc: the VM answered %s with FAIL\n", type_s);
  return code;
}

/* The chunk's bytes: every argument's hex digits in a row (' ', ':' and '_' skipped), into a
 * malloc'd *out the caller frees. */
static void parse_hex(int argc, char **argv, uint8_t **out, size_t *len) {
  size_t digits = 0;
  for (int k = 0; k < argc; k++) digits += strlen(argv[k]);
  uint8_t *data = malloc(digits / 2 + 1);
  if (data == NULL) exit(EXIT_ERROR);
  size_t n = 0;
  int hi = -1;
  for (int k = 0; k < argc; k++) {
    for (const char *p = argv[k]; *p; p++) {
      if (*p == ' ' || *p == ':' || *p == '_') continue;
      int v = hexval((unsigned char)*p);
      if (v < 0) cli_usage_error("send: '%s' is not hex", argv[k]);
      if (hi < 0)
        hi = v;
      else {
        data[n++] = (uint8_t)(hi << 4 | v);
        hi = -1;
      }
    }
  }
  if (hi >= 0) cli_usage_error("send: odd number of hex digits%s", "");
  *out = data;
  *len = n;
}

static int send_main(opts *o, int argc, char **argv) {
  int listen_ms = 0;
  for (int k = 0; k < argc; k++) { /* --listen SECS: anywhere, as threads' --watch */
    if (strcmp(argv[k], "--listen") != 0 && strcmp(argv[k], "-l") != 0) continue;
    char *end;
    long v = k + 1 < argc ? strtol(argv[k + 1], &end, 10) : -1;
    if (v < 1 || v > 3600 || *end) cli_usage_error("send: --listen needs SECONDS (1-3600)%s", "");
    listen_ms = (int)v * 1000;
    memmove(&argv[k], &argv[k + 2], (size_t)(argc - k - 2) * sizeof argv[0]);
    argc -= 2;
    break;
  }
  if (argc < 1 || strlen(argv[0]) != 4) cli_usage_error("usage: ddmc send TYPE [HEX...]  (TYPE: 4 characters)%s", "");
  uint8_t *data;
  size_t len;
  parse_hex(argc - 1, argv + 1, &data, &len);
  sess s;
  sess_open(&s, o);
  int rc = send_run(&s, argv[0], data, len, listen_ms);
  free(data);
  sess_close(&s);
  return rc;
}

const cli_cmd cmd_send = {
    .name = "send",
    .summary =
        "  send TYPE [HEX...] [--listen SECS]\n"
        "                         send one raw chunk (e.g. send HELO 00000001), print the reply;\n"
        "                         --listen: then the VM's unsolicited chunks for SECS seconds\n",
    .help =
        "usage: ddmc [OPTIONS] send TYPE [HEX...] [--listen SECS]\n"
        "\n"
        "Send one raw chunk of type TYPE (4 characters) with the bytes HEX (spaces, ':' and '_' are\n"
        "ignored) and print the reply, e.g. ddmc send HELO 00000001.\n"
        "\n"
        "Options:\n"
        "  -l, --listen SECS        then print the unsolicited chunks the VM sends for SECS seconds\n"
        "                           (an app's DdmServer.sendChunk)\n",
    .run = send_main,
};
