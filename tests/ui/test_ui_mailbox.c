/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc ui's mailbox (tools/ui_vm.h) under pages that ask at once: every caller gets its own
 * answer, whole. The worker has no VM (nothing listens on the port), so each operation answers
 * 409 at once and the callers contend for the slot as fast as they can. A result freed before its
 * caller took it comes back as a NULL body, which the HTTP server turns into a 500. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_vm.h"

#define CALLERS 4
#define CALLS 400

static ui_vm *g_vm;
static atomic_int g_bad, g_busy, g_done;

static void *caller(void *arg) {
  (void)arg;
  for (int i = 0; i < CALLS; i++) {
    ui_vm_result r;
    ui_vm_call(g_vm, i % 2 ? "gc" : "alloc-stop", "", &r);
    if (r.status == 503) {
      atomic_fetch_add(&g_busy, 1);
    } else if (r.body == NULL || r.status != 409 || strstr(r.body, "cannot connect") == NULL) {
      if (atomic_fetch_add(&g_bad, 1) < 5)
        fprintf(stderr, "call %d: status %d, body %s\n", i, r.status, r.body ? r.body : "(null)");
    } else {
      atomic_fetch_add(&g_done, 1);
    }
    free(r.body);
  }
  return NULL;
}

static volatile sig_atomic_t g_stop;

static void *worker(void *arg) {
  ui_vm_run(arg, &g_stop);
  return NULL;
}

int main(void) {
  opts o;
  memset(&o, 0, sizeof o);
  snprintf(o.host, sizeof o.host, "127.0.0.1");
  o.port = 1; /* nothing listens there: the worker stays unconnected */
  o.target = "127.0.0.1:1";
  o.timeout_ms = 1000;
  g_vm = ui_vm_new(&o);
  if (g_vm == NULL) return 1;
  pthread_t w, c[CALLERS];
  pthread_create(&w, NULL, worker, g_vm);
  for (int i = 0; i < CALLERS; i++) pthread_create(&c[i], NULL, caller, NULL);
  for (int i = 0; i < CALLERS; i++) pthread_join(c[i], NULL);
  g_stop = 1;
  pthread_join(w, NULL);
  ui_vm_free(g_vm);
  int bad = atomic_load(&g_bad), done = atomic_load(&g_done), busy = atomic_load(&g_busy);
  printf("%d calls answered whole, %d wrong, %d busy\n", done, bad, busy);
  /* 503 is the mailbox's own answer after ten seconds of waiting: none here, each op is instant. */
  if (bad != 0 || busy != 0 || done != CALLERS * CALLS) {
    printf("FAIL: every call gets its own 409 answer\n");
    return 1;
  }
  printf("ok   every call got its own answer\n");
  return 0;
}
