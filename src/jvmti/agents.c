/* SPDX-License-Identifier: Apache-2.0 */
/* The layer's state on a ddmc_vm, agent loading and the VM's lifecycle calls
 * (include/ddmc/agent.h): ddmc_agent_parse_flag, ddmc_agent_load, ddmc_agent_set_property,
 * ddmc_agent_vm_start / _vm_init / _vm_death, ddmc_agent_unload, ddmc_agent_count. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jvmti/funcs.h"
#include "jvmti/tags.h"
#include "vm_int.h"

int ddmc__jv_ensure(ddmc_vm *vm, ddmc__jvmti **out) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (jv != NULL) {
    *out = jv;
    return 0;
  }
  jv = ddmc__calloc(&vm->mem, 1, sizeof(*jv));
  if (jv == NULL) return DDMC_ENOMEM;
  jv->vm = vm;
  jv->mem = &vm->mem;
  jv->bridge = ddmc__bridge(vm);
  jv->bridge_data = vm->bridge_data;
  jv->javavm.functions = ddmc__jv_jvm_functions();
  jv->javavm.jv = jv;
  atomic_init(&jv->phase, JVMTI_PHASE_ONLOAD);
  if (pthread_mutex_init(&jv->lock, NULL) != 0) {
    ddmc__free(&vm->mem, jv);
    return DDMC_ENOMEM;
  }
  if (ddmc__jv_refs_init(&jv->refs) != 0 || ddmc__jv_members_init(&jv->members) != 0 ||
      ddmc__jv_susp_init(&jv->susp) != 0) {
    pthread_mutex_destroy(&jv->lock);
    ddmc__free(&vm->mem, jv);
    return DDMC_ENOMEM;
  }
  pthread_mutex_init(&jv->step_lock, NULL); /* a default mutex: cannot fail on Linux */
  atomic_store_explicit(&vm->jvmti, jv, memory_order_release);
  int rc = ddmc__jv_subscribe(vm); /* once the state is there for the hub to find */
  if (rc != 0) return rc;
  *out = jv;
  return 0;
}

void ddmc__jv_destroy(ddmc_vm *vm) {
  ddmc__jvmti *jv = atomic_exchange(&vm->jvmti, NULL);
  if (jv == NULL) return;
  ddmc__jv_tags_free(jv); /* the environments' tag tables */
  for (ddmc__jv_jenv *e = atomic_load(&jv->envs), *n; e != NULL; e = n) {
    n = e->next;
    ddmc__free(jv->mem, e);
  }
  for (ddmc__jv_agent *a = jv->agents, *n; a != NULL; a = n) {
    n = a->next;
    ddmc__free(jv->mem, a->path);
    ddmc__free(jv->mem, a);
  }
  for (uint32_t i = 0; i < jv->nprops; i++) {
    ddmc__free(jv->mem, jv->props[i].key);
    ddmc__free(jv->mem, jv->props[i].value);
  }
  ddmc__free(jv->mem, jv->props);
  ddmc__jv_refs_destroy(&jv->refs, jv->mem);
  ddmc__jv_members_destroy(&jv->members, jv->mem);
  pthread_mutex_destroy(&jv->step_lock);
  ddmc__jv_susp_destroy(&jv->susp);
  pthread_mutex_destroy(&jv->lock);
  ddmc__free(jv->mem, jv);
}

/* ---- the public calls */

int ddmc_agent_parse_flag(const char *arg, ddmc_agent_flag *out) {
  if (arg == NULL || out == NULL) return DDMC_EINVAL;
  memset(out, 0, sizeof(*out));
  const char *rest;
  if (strncmp(arg, "-agentpath:", 11) == 0) {
    out->by_path = 1;
    rest = arg + 11;
  } else if (strncmp(arg, "-agentlib:", 10) == 0) {
    rest = arg + 10;
    /* -agentlib:jdwp is the debugger, not an agent library (ddmc_options_parse takes it). */
    if (strncmp(rest, "jdwp", 4) == 0 && (rest[4] == 0 || rest[4] == '=')) return DDMC_ENOENT;
  } else {
    return DDMC_ENOENT;
  }
  const char *eq = strchr(rest, '=');
  size_t nlen = eq ? (size_t)(eq - rest) : strlen(rest);
  if (nlen == 0) return DDMC_EINVAL;
  if (nlen >= sizeof(out->name) || (eq && strlen(eq + 1) >= sizeof(out->options))) return DDMC_ETOOBIG;
  if (!out->by_path && memchr(rest, '/', nlen) != NULL) return DDMC_EINVAL; /* a name, not a path */
  memcpy(out->name, rest, nlen);
  out->name[nlen] = 0;
  if (eq) {
    strcpy(out->options, eq + 1);
    out->has_options = 1;
  }
  return 0;
}

/* System properties a VM may set before agents load: far more than any launcher passes, and a
 * bound on what the list (copied whole by GetSystemProperties) holds. */
#define DDMC__JV_MAX_PROPS 4096

int ddmc_agent_set_property(ddmc_vm *vm, const char *key, const char *value) {
  if (vm == NULL || key == NULL || value == NULL || key[0] == 0) return DDMC_EINVAL;
  ddmc__jvmti *jv;
  int rc = ddmc__jv_ensure(vm, &jv);
  if (rc != 0) return rc;
  if (atomic_load(&jv->phase) != JVMTI_PHASE_ONLOAD) return DDMC_ESTATE;
  char *v = ddmc__strdup(jv->mem, value);
  if (v == NULL) return DDMC_ENOMEM;
  ddmc__lock(&jv->lock);
  for (uint32_t i = 0; i < jv->nprops; i++)
    if (strcmp(jv->props[i].key, key) == 0) {
      ddmc__free(jv->mem, jv->props[i].value);
      jv->props[i].value = v;
      ddmc__unlock(&jv->lock);
      return 0;
    }
  rc = DDMC_ENOMEM;
  ddmc__jv_prop *p = jv->nprops < DDMC__JV_MAX_PROPS
                         ? ddmc__realloc(jv->mem, jv->props, sizeof(ddmc__jv_prop) * (jv->nprops + 1))
                         : NULL;
  char *k = p ? ddmc__strdup(jv->mem, key) : NULL;
  if (p) jv->props = p;
  if (k) {
    jv->props[jv->nprops++] = (ddmc__jv_prop){k, v};
    rc = 0;
  }
  ddmc__unlock(&jv->lock);
  if (rc) ddmc__free(jv->mem, v);
  return rc;
}

typedef jint (*onload_fn)(ddmc__jv_javavm *vm, char *options, void *reserved);
typedef void (*onunload_fn)(ddmc__jv_javavm *vm);

static const char *file_kind(mode_t m) {
  return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* dlopen reads whatever the path names: a FIFO holds the VM's start until some process writes
 * to it, a character device may never end. Only a regular file (through any symlinks) goes on.
 * A bare name (no '/') is searched by dlopen in the library path, which is the loader's
 * business. Returns 0 or DDMC_ENOENT with the reason in err. */
static int check_agent_file(const char *path, char *err, size_t errlen) {
  if (strchr(path, '/') == NULL) return 0;
  struct stat st;
  if (stat(path, &st) != 0) {
    if (err) snprintf(err, errlen, "could not load agent library %s: %s", path, strerror(errno));
    return DDMC_ENOENT;
  }
  if (!S_ISREG(st.st_mode)) {
    if (err) snprintf(err, errlen, "could not load agent library %s: %s, not a regular file", path, file_kind(st.st_mode));
    return DDMC_ENOENT;
  }
  return 0;
}

int ddmc_agent_load(ddmc_vm *vm, const char *path, const char *options, char *err, size_t errlen) {
  if (err && errlen) err[0] = 0;
  if (vm == NULL || path == NULL) return DDMC_EINVAL;
  ddmc__jvmti *jv;
  int rc = ddmc__jv_ensure(vm, &jv);
  if (rc != 0) return rc;
  if (atomic_load(&jv->phase) != JVMTI_PHASE_ONLOAD) {
    if (err) snprintf(err, errlen, "agent %s: the VM has started (agents load before the program runs)", path);
    return DDMC_ESTATE;
  }
  if ((rc = check_agent_file(path, err, errlen)) != 0) return rc;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    const char *why = dlerror();
    if (err) snprintf(err, errlen, "could not load agent library %s: %s", path, why ? why : "dlopen failed");
    return DDMC_ENOENT;
  }
  /* dlsym returns an object pointer; the specification guarantees the conversion on POSIX. */
  void *sym = dlsym(h, "Agent_OnLoad");
  if (sym == NULL) {
    if (err) snprintf(err, errlen, "agent library %s has no Agent_OnLoad", path);
    dlclose(h);
    return DDMC_EINVAL;
  }
  onload_fn onload;
  memcpy(&onload, &sym, sizeof(onload));
  ddmc__jv_agent *a = ddmc__calloc(jv->mem, 1, sizeof(*a));
  char *p = ddmc__strdup(jv->mem, path);
  char *opts = ddmc__strdup(jv->mem, options ? options : "");
  if (a == NULL || p == NULL || opts == NULL) {
    ddmc__free(jv->mem, a);
    ddmc__free(jv->mem, p);
    ddmc__free(jv->mem, opts);
    dlclose(h);
    return DDMC_ENOMEM;
  }
  /* Agent_OnLoad gets NULL for no options, as HotSpot passes it for "-agentpath:lib". */
  jint r = onload(&jv->javavm, options ? opts : NULL, NULL);
  ddmc__free(jv->mem, opts);
  if (r != 0) {
    if (err) snprintf(err, errlen, "agent library %s failed to initialize: Agent_OnLoad returned %d", path, (int)r);
    ddmc__free(jv->mem, a);
    ddmc__free(jv->mem, p);
    /* The library stays loaded: an environment it made may still be referenced (HotSpot then
     * ends the VM, as the VM should). */
    return DDMC_ESTATE;
  }
  a->handle = h;
  a->path = p;
  ddmc__lock(&jv->lock);
  ddmc__jv_agent **tail = &jv->agents;
  while (*tail) tail = &(*tail)->next;
  *tail = a;
  ddmc__unlock(&jv->lock);
  return 0;
}

int ddmc_agent_count(const ddmc_vm *vm) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (jv == NULL) return 0;
  int n = 0;
  ddmc__lock(&jv->lock);
  for (ddmc__jv_agent *a = jv->agents; a; a = a->next) n++;
  ddmc__unlock(&jv->lock);
  return n;
}

int ddmc_agent_vm_start(ddmc_vm *vm) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (jv == NULL) return 0;
  int expect = JVMTI_PHASE_ONLOAD;
  if (!atomic_compare_exchange_strong(&jv->phase, &expect, JVMTI_PHASE_START)) return DDMC_ESTATE;
  ddmc__jv_hub_vm_start(jv);
  return 0;
}

int ddmc_agent_vm_init(ddmc_vm *vm, uint32_t thread) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (jv == NULL) return 0;
  if (atomic_load(&jv->phase) == JVMTI_PHASE_ONLOAD) ddmc_agent_vm_start(vm);
  int expect = JVMTI_PHASE_START;
  if (!atomic_compare_exchange_strong(&jv->phase, &expect, JVMTI_PHASE_LIVE)) return DDMC_ESTATE;
  ddmc__jv_hub_vm_init(jv, thread);
  return 0;
}

int ddmc_agent_vm_death(ddmc_vm *vm, uint32_t thread) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (jv == NULL) return 0;
  if (atomic_load(&jv->phase) != JVMTI_PHASE_LIVE) return DDMC_ESTATE;
  ddmc__jv_hub_vm_death(jv, thread); /* still live while the callbacks run */
  atomic_store(&jv->phase, JVMTI_PHASE_DEAD);
  return 0;
}

void ddmc_agent_unload(ddmc_vm *vm) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (jv == NULL) return;
  atomic_store(&jv->phase, JVMTI_PHASE_DEAD);
  ddmc__lock(&jv->lock);
  ddmc__jv_agent *list = jv->agents;
  jv->agents = NULL;
  ddmc__unlock(&jv->lock);
  for (ddmc__jv_agent *a = list, *n; a != NULL; a = n) {
    n = a->next;
    void *sym = dlsym(a->handle, "Agent_OnUnload");
    if (sym != NULL) {
      onunload_fn fn;
      memcpy(&fn, &sym, sizeof(fn));
      fn(&jv->javavm);
    }
    /* Not dlclose'd: an agent thread or a callback in flight may still run its code. */
    ddmc__free(jv->mem, a->path);
    ddmc__free(jv->mem, a);
  }
}

