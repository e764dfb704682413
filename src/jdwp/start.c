/* SPDX-License-Identifier: Apache-2.0 */
/* Starting the debug service (ddmc_vm_start, or a throw that matched onthrow=: trigger.c), and
 * launch=CMD: when the debug service starts, run CMD with two more arguments, the transport's name
 * and the address a debugger reaches it at, as the JDK's agent does ("launch.sh dt_socket 8000"):
 * the usual way to have a debugger attach by itself. CMD is split on spaces and run without a
 * shell (nothing in it is interpreted); the library does not wait for it, and a small detached
 * thread reaps it so no zombie is left behind. */
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vm_int.h"

extern char **environ;

#define LAUNCH_MAX_ARGS 64

static void *reap(void *arg) {
  pid_t pid = (pid_t)(intptr_t)arg;
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
  }
  return NULL;
}

/* The address as the JDK's agent gives it: the listening port alone (whatever host was named),
 * HOST:PORT when the VM dials out, jdwp:PID through adb. */
static void launch_address(const ddmc_vm *vm, char *out, size_t n) {
  if (vm->opt.transport == DDMC_TRANSPORT_ADB)
    snprintf(out, n, "jdwp:%u", (unsigned)getpid());
  else if (vm->opt.server)
    snprintf(out, n, "%u", (unsigned)atomic_load(&((ddmc_vm *)vm)->port));
  else
    snprintf(out, n, "%s:%u", vm->opt.host, (unsigned)vm->opt.port);
}

int ddmc__jdwp_launch(ddmc_vm *vm) {
  char cmd[sizeof(vm->opt.launch)], address[300];
  char *argv[LAUNCH_MAX_ARGS + 3];
  int argc = 0;
  memcpy(cmd, vm->opt.launch, sizeof(cmd));
  for (char *save = NULL, *w = strtok_r(cmd, " ", &save); w != NULL; w = strtok_r(NULL, " ", &save)) {
    if (argc == LAUNCH_MAX_ARGS) {
      ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: launch= has more than %d words; not run", LAUNCH_MAX_ARGS);
      return DDMC_EINVAL;
    }
    argv[argc++] = w;
  }
  if (argc == 0) return DDMC_EINVAL;
  launch_address(vm, address, sizeof(address));
  argv[argc++] = (char *)vm->transport->name;
  argv[argc++] = address;
  argv[argc] = NULL;
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
  if (rc != 0) {
    ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: launch= cannot run '%s': %s", argv[0], strerror(rc));
    return DDMC_EIO;
  }
  ddmc__log(vm, DDMC_LOG_INFO, "JDWP: launched '%s %s %s' (pid %d)", vm->opt.launch, argv[argc - 2], address, (int)pid);
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &attr, reap, (void *)(intptr_t)pid) != 0)
    ddmc__log(vm, DDMC_LOG_WARN, "JDWP: cannot start a thread to reap the launched pid %d", (int)pid);
  pthread_attr_destroy(&attr);
  return 0;
}

/* strict= and stdalloc= are accepted as the JDK accepts them, but said to have no effect. */
static void warn_obsolete(ddmc_vm *vm) {
  if (vm->opt.obsolete & DDMC_OBSOLETE_STRICT)
    ddmc__log(vm, DDMC_LOG_WARN, "JDWP: option 'strict' is obsolete and has no effect");
  if (vm->opt.obsolete & DDMC_OBSOLETE_STDALLOC)
    ddmc__log(vm, DDMC_LOG_WARN, "JDWP: option 'stdalloc' is obsolete and has no effect");
}

int ddmc__jdwp_begin(ddmc_vm *vm) {
  /* Under state_lock: a trigger on a VM thread must not race ddmc_vm_stop's teardown. */
  ddmc__lock(&vm->state_lock);
  int rc = atomic_load(&vm->stopping) ? DDMC_ESTATE : vm->transport->prepare(vm);
  if (rc == 0 && pthread_create(&vm->thread, NULL, ddmc__jdwp_thread_main, vm) != 0) {
    vm->transport->shutdown(vm);
    rc = DDMC_ENOMEM;
  }
  if (rc == 0) vm->thread_running = 1;
  ddmc__unlock(&vm->state_lock);
  if (rc != 0) return rc;
  warn_obsolete(vm);
  if (vm->opt.launch[0]) ddmc__jdwp_launch(vm);
  if (vm->opt.suspend) {
    /* suspend=y: the VM does not run until a peer has shaken hands (Dalvik's attachCond). */
    ddmc__lock(&vm->state_lock);
    while (atomic_load(&vm->st_sessions) == 0 && !atomic_load(&vm->stopping) && !atomic_load(&vm->timed_out))
      pthread_cond_wait(&vm->state_cond, &vm->state_lock);
    int late = atomic_load(&vm->st_sessions) == 0 && atomic_load(&vm->timed_out);
    ddmc__unlock(&vm->state_lock);
    if (late) return DDMC_ETIMEDOUT;
  }
  return 0;
}
