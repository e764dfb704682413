/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc hprof: a heap dump of the VM, as DDMS's "Dump HPROF file" button took it. HPDS: the VM sends the whole Android
 * hprof (1.0.3) as one HPDS chunk before its empty reply; ddmc checks it (host/hprof.c), then saves it as received or,
 * with
 * --standard, as the 1.0.2 file hprof-conv would write (MAT, VisualVM). HPDU (--device-file):
 * the VM writes the file itself and answers HPDU [0] or [0xFF][message]. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T_HPDS DDMC_HOST_FOURCC('H', 'P', 'D', 'S')
#define T_HPDU DDMC_HOST_FOURCC('H', 'P', 'D', 'U')
#define T_FAIL DDMC_HOST_FOURCC('F', 'A', 'I', 'L')

typedef struct hprof_args {
  const char *out;         /* FILE.hprof on this machine (HPDS) */
  int standard;            /* --standard: write 1.0.2 as hprof-conv does */
  const char *device_file; /* --device-file PATH: HPDU, the VM writes PATH itself */
} hprof_args;

static void fail_from(sess *s, const ddmc_host_packet *p) {
  ddmc_host_fail f;
  if (ddmc_host_fail_parse(p->chunk, p->chunk_len, &f) == 0) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", f.msg ? f.msg : "");
    ddmc_host_fail_free(&f);
    sess_fail(s, EXIT_FAIL, "the VM refused the heap dump: %s", msg);
  }
  sess_fail(s, EXIT_FAIL, "the VM refused the heap dump (malformed FAIL chunk)");
}

/* Sends HPDS and takes the HPDS chunk that comes before the reply. */
static void collect(sess *s, uint8_t **data, size_t *len) {
  uint32_t id;
  int rc = ddmc_host_set_max_packet(s->h, UINT32_MAX);
  if (rc == 0) rc = ddmc_host_send_chunk(s->h, T_HPDS, NULL, 0, &id);
  if (rc) sess_fail(s, sess_exit_code(rc), "sending HPDS failed: %s", ddmc_host_strerror(rc));
  sess_progress pr;
  sess_show_progress(s, &pr, "the heap dump");
  /* The timeout bounds silence, not the length of the transfer: the dump is built first. */
  int idle = s->o->timeout_ms < 60000 ? 60000 : s->o->timeout_ms;
  int got_reply = 0;
  while (!got_reply) {
    ddmc_host_packet p;
    rc = ddmc_host_recv(s->h, &p, idle);
    if (rc == DDMC_ETIMEDOUT) sess_fail(s, EXIT_TIMEOUT, "the VM sent nothing for %d ms after HPDS", idle);
    if (rc == DDMC_ECLOSED) sess_fail(s, EXIT_ERROR, "the VM closed the connection during the heap dump");
    if (rc) sess_fail(s, sess_exit_code(rc), "receiving the heap dump failed: %s", ddmc_host_strerror(rc));
    if (p.is_reply && p.id == id) {
      if (p.error != 0) sess_fail(s, EXIT_NOT_DDM, "the VM answered HPDS with JDWP error %u", (unsigned)p.error);
      if (p.is_ddm && p.chunk_type == T_FAIL) fail_from(s, &p);
      got_reply = 1;
    } else if (!p.is_reply && p.is_ddm && p.chunk_type == T_HPDS && *data == NULL) {
      if ((*data = malloc(p.chunk_len ? p.chunk_len : 1)) == NULL) sess_fail(s, EXIT_ERROR, "out of memory");
      memcpy(*data, p.chunk, p.chunk_len);
      *len = p.chunk_len;
    } else {
      sess_dispatch(s, &p);
    }
  }
  ddmc_host_set_progress(s->h, NULL, NULL);
  if (*data == NULL) sess_fail(s, EXIT_ERROR, "the VM answered HPDS without sending a heap dump");
}

static int write_file(const char *path, const uint8_t *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return -1;
  int ok = fwrite(p, 1, n, f) == n;
  if (fclose(f) != 0) ok = 0;
  return ok ? 0 : -1;
}

static int device_dump(sess *s, const hprof_args *a) {
  size_t units = 0;
  for (const char *c = a->device_file; *c; c++) units++; /* ASCII paths: one unit per byte */
  uint8_t *req = malloc(4 + units * 2);
  if (req == NULL) sess_fail(s, EXIT_ERROR, "out of memory");
  req[0] = (uint8_t)(units >> 24), req[1] = (uint8_t)(units >> 16), req[2] = (uint8_t)(units >> 8),
  req[3] = (uint8_t)units;
  for (size_t i = 0; i < units; i++) req[4 + 2 * i] = 0, req[5 + 2 * i] = (uint8_t)a->device_file[i];
  ddmc_host_packet r;
  int rc = ddmc_host_request(s->h, T_HPDU, req, 4 + units * 2, &r, s->o->timeout_ms < 60000 ? 60000 : s->o->timeout_ms);
  free(req);
  if (rc) sess_fail(s, sess_exit_code(rc), "HPDU failed: %s", ddmc_host_strerror(rc));
  if (r.is_ddm && r.chunk_type == T_FAIL) fail_from(s, &r);
  if (!r.is_ddm || r.chunk_type != T_HPDU || r.chunk_len < 1)
    sess_fail(s, EXIT_NOT_DDM, "the VM's HPDU reply is malformed");
  if (r.chunk[0] != 0) {
    char msg[600] = "";
    if (r.chunk_len >= 5) { /* this library's message after the result byte; Dalvik sent none */
      uint32_t n = (uint32_t)r.chunk[1] << 24 | (uint32_t)r.chunk[2] << 16 | (uint32_t)r.chunk[3] << 8 | r.chunk[4];
      size_t k = 0;
      for (uint32_t i = 0; i < n && 5 + 2 * (size_t)i + 1 < r.chunk_len && k + 1 < sizeof msg; i++) {
        uint16_t u = (uint16_t)(r.chunk[5 + 2 * i] << 8 | r.chunk[6 + 2 * i]);
        msg[k++] = u >= 0x20 && u < 0x7f ? (char)u : '?';
      }
      msg[k] = 0;
    }
    sess_fail(s, EXIT_FAIL, "the VM could not write %s%s%s", a->device_file, msg[0] ? ": " : "", msg);
  }
  if (s->o->json) {
    jw w;
    sess_json_open(s, &w, "hprof");
    jw_kstr(&w, "device_file", a->device_file);
    return sess_json_close(s, &w);
  }
  printf("%-10s the VM wrote %s\n", "hprof", a->device_file);
  return fflush(stdout) == 0 ? EXIT_OK : EXIT_ERROR;
}

static int hprof_run(sess *s, const hprof_args *a) {
  if (a->device_file) return device_dump(s, a);
  int64_t t0 = sess_mono_ms();
  uint8_t *data = NULL;
  size_t len = 0;
  collect(s, &data, &len);
  double took = (double)(sess_mono_ms() - t0) / 1000.0;
  ddmc_host_hprof_info info;
  int rc = ddmc_host_hprof_scan(data, len, &info);
  if (rc) {
    int w = write_file(a->out, data, len);
    free(data);
    sess_fail(s, EXIT_NOT_DDM, "the VM's heap dump is malformed (%s)%s%s", ddmc_host_strerror(rc),
              w == 0 ? "; saved as it came in " : "", w == 0 ? a->out : "");
  }
  size_t out_len = len;
  if (a->standard && (rc = ddmc_host_hprof_to_standard(data, len, data, &out_len)) != 0) {
    free(data);
    sess_fail(s, EXIT_NOT_DDM, "cannot convert the heap dump to 1.0.2: %s", ddmc_host_strerror(rc));
  }
  if (write_file(a->out, data, out_len) != 0) {
    int e = errno;
    free(data);
    sess_fail(s, EXIT_ERROR, "cannot write %s: %s", a->out, strerror(e));
  }
  free(data);
  const char *format = a->standard ? "JAVA PROFILE 1.0.2" : "JAVA PROFILE 1.0.3";
  if (s->o->json) {
    jw w;
    sess_json_open(s, &w, "hprof");
    jw_kstr(&w, "file", a->out);
    jw_kstr(&w, "format", format);
    jw_kuint(&w, "bytes", out_len);
    jw_kuint(&w, "received_bytes", len);
    jw_kuint(&w, "classes", info.classes);
    jw_kuint(&w, "instances", info.instances);
    jw_kuint(&w, "object_arrays", info.object_arrays);
    jw_kuint(&w, "primitive_arrays", info.primitive_arrays);
    jw_kuint(&w, "roots", info.roots);
    jw_kuint(&w, "strings", info.strings);
    return sess_json_close(s, &w);
  }
  printf("%-10s %s: %zu bytes (%s), %llu classes, %llu instances, %llu arrays, %llu roots (%.1f s)\n", "hprof", a->out,
         out_len, format, (unsigned long long)info.classes, (unsigned long long)info.instances,
         (unsigned long long)(info.object_arrays + info.primitive_arrays), (unsigned long long)info.roots, took);
  return fflush(stdout) == 0 ? EXIT_OK : EXIT_ERROR;
}

static int hprof_main(opts *o, int argc, char **argv) {
  hprof_args a = {NULL, 0, NULL};
  for (int k = 0; k < argc; k++) {
    if (strcmp(argv[k], "-o") == 0 || strcmp(argv[k], "--output") == 0) {
      if (k + 1 >= argc) cli_usage_error("%s needs FILE.hprof", argv[k]);
      a.out = argv[++k];
    } else if (strcmp(argv[k], "--standard") == 0) {
      a.standard = 1;
    } else if (strcmp(argv[k], "--device-file") == 0) {
      if (k + 1 >= argc || argv[k + 1][0] == 0) cli_usage_error("%s needs a PATH on the device", argv[k]);
      a.device_file = argv[++k];
    } else {
      cli_usage_error("hprof: unexpected argument '%s'", argv[k]);
    }
  }
  if ((a.out == NULL) == (a.device_file == NULL) || (a.standard && a.device_file))
    cli_usage_error("usage: ddmc hprof -o FILE.hprof [--standard] | ddmc hprof --device-file PATH%s", "");
  sess s;
  sess_open(&s, o);
  int rc = hprof_run(&s, &a);
  sess_close(&s);
  return rc;
}

const cli_cmd cmd_hprof = {
    .name = "hprof",
    .summary =
        "  hprof -o FILE.hprof [--standard] | hprof --device-file PATH\n"
        "                         heap dump (HPDS): Android's hprof 1.0.3 (Android Studio, Perfetto),\n"
        "                         or with --standard the 1.0.2 hprof-conv writes (MAT, VisualVM);\n"
        "                         --device-file: the VM writes PATH itself (HPDU)\n",
    .help =
        "usage: ddmc [OPTIONS] hprof -o FILE.hprof [--standard]\n"
        "       ddmc [OPTIONS] hprof --device-file PATH\n"
        "\n"
        "A heap dump (HPDS): Android's hprof 1.0.3, checked and saved to FILE.hprof; or written by the\n"
        "VM itself to PATH (HPDU).\n"
        "\n"
        "Options:\n"
        "  -o, --output FILE.hprof  where to save the dump\n"
        "      --standard           save the standard 1.0.2 form (hprof-conv's; MAT, VisualVM)\n"
        "      --device-file PATH   the VM writes the dump to PATH on its side instead (HPDU)\n",
    .run = hprof_main,
};
