/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc exit STATUS: ask the VM to exit (EXIT) and check that it went away. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_EXIT DDMC_HOST_FOURCC('E', 'X', 'I', 'T')
#define T_FAIL DDMC_HOST_FOURCC('F', 'A', 'I', 'L')

static int exit_run(sess *s, int32_t status) {
  uint8_t req[4] = {(uint8_t)((uint32_t)status >> 24), (uint8_t)((uint32_t)status >> 16),
                    (uint8_t)((uint32_t)status >> 8), (uint8_t)status};
  ddmc_host_packet r;
  const char *result;
  int rc = ddmc_host_request(s->h, T_EXIT, req, 4, &r, s->o->timeout_ms);
  int code = EXIT_OK;
  if (rc == 0 && r.is_ddm && r.chunk_type == T_FAIL) {
    ddmc_host_fail f;
    char msg[300] = "";
    if (ddmc_host_fail_parse(r.chunk, r.chunk_len, &f) == 0) {
      snprintf(msg, sizeof msg, ": %s (FAIL code %d)", f.msg, (int)f.code); /* sess_fail escapes */
      ddmc_host_fail_free(&f);
    }
    sess_fail(s, EXIT_FAIL, "the VM refused EXIT%s", msg);
  }
  if (rc == DDMC_ECLOSED) {
    result = "closed";
  } else if (rc == 0) {
    /* Acknowledged: the connection should now close as the process goes. */
    ddmc_host_packet p;
    int64_t deadline = sess_mono_ms() + s->o->timeout_ms;
    result = "acknowledged";
    for (;;) {
      int64_t left = deadline - sess_mono_ms();
      if (left <= 0) break;
      int e = ddmc_host_recv(s->h, &p, (int)left);
      if (e == DDMC_ECLOSED || e == DDMC_EIO) {
        result = "closed";
        break;
      }
      if (e == DDMC_ETIMEDOUT) break;
      if (e) break;
    }
    if (strcmp(result, "closed") != 0) code = EXIT_TIMEOUT;
  } else if (rc == DDMC_ETIMEDOUT) {
    result = "no-answer";
    code = EXIT_TIMEOUT;
  } else {
    result = "error";
    code = sess_exit_code(rc);
  }
  if (s->o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_obj(&w);
    sess_json_head(s, &w, code == EXIT_OK);
    jw_kint(&w, "status", status);
    jw_kstr(&w, "result", result);
    jw_kbool(&w, "exited", strcmp(result, "closed") == 0);
    jw_kint(&w, "exit_code", code);
    cli_json_finish(s, &w);
    return code;
  }
  if (code == EXIT_OK)
    printf("VM %u exited (status %d requested; connection closed)\n", (unsigned)s->helo.pid, (int)status);
  else
    fprintf(stderr, "ddmc: EXIT %d sent, but the VM %s within %d ms\n", (int)status,
            strcmp(result, "acknowledged") == 0 ? "acknowledged it and did not exit" : "did not answer",
            s->o->timeout_ms);
  cli_finish_text(s);
  return code;
}

static int exit_main(opts *o, int argc, char **argv) {
  long long v = 0;
  char *end = NULL;
  if (argc == 1) {
    errno = 0;
    v = strtoll(argv[0], &end, 0);
    if (errno || *end || end == argv[0] || v < INT32_MIN || v > INT32_MAX) argc = -1;
  }
  if (argc != 1) cli_usage_error("usage: ddmc exit STATUS (a 32-bit integer)%s", "");
  sess s;
  sess_open(&s, o);
  int rc = exit_run(&s, (int32_t)v);
  sess_close(&s);
  return rc;
}

const cli_cmd cmd_exit = {
    .name = "exit",
    .summary = "  exit STATUS            ask the VM to exit with STATUS (EXIT)\n",
    .help =
        "usage: ddmc [OPTIONS] exit STATUS\n"
        "\n"
        "Ask the VM to exit with STATUS, a 32-bit integer (EXIT), and check that it went away.\n"
        "\n"
        "Options: none.\n",
    .run = exit_main,
};
