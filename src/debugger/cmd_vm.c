/* SPDX-License-Identifier: Apache-2.0 */
/* VirtualMachine (1).
 *
 * Capabilities promise only what the library and the VM's ops deliver: JDI uses a capability
 * answered true without checking again (docs/protocol/jdwp.md §2.3). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "send/send.h"
#include "debugger/glue.h"
#include "debugger/requests.h"

#define DDMC__MAX_SIGNATURE 4096
#define DDMC__MAX_CLASSES (1u << 20)
#define DDMC__MAX_NEW_STRING ((size_t)1 << 20)

static int vm_version(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  const char *name = ddmc__dbg_vm_name(d->vm);
  char desc[256];
  snprintf(desc, sizeof(desc), "%s (libddmc %s JDWP back-end)", name ? name : "VM", ddmc_version_string());
  ddmc__dbg_wr_string(out, desc);
  /* JDWP 1.8: JDI then uses the *WithGeneric forms; 9 with the module ops, since JDI asks for
   * modules (canGetModuleInfo) by the version alone. Never 19: JDI would take threads for
   * virtual ones that may be. */
  int modules = DDMC__DBG_MODULES(d);
  ddmc_buf_put_u32(out, modules ? 9 : 1);
  ddmc_buf_put_u32(out, modules ? 0 : 8);
  ddmc__dbg_wr_string(out, ddmc_version_string());
  ddmc__dbg_wr_string(out, name ? name : "VM");
  return 0;
}

/* Every class the VM lists, copied out first so the visitor calls no op inside the VM's own
 * iteration. */
typedef struct class_list {
  const ddmc__mem *mem;
  ddmc_class *v;
  uint32_t n, cap;
  int err;
} class_list;

static int list_class(void *arg, ddmc_class c) {
  class_list *l = arg;
  if (l->n == l->cap) {
    if (l->cap >= DDMC__MAX_CLASSES) {
      l->err = DDMC_JDWP_OUT_OF_MEMORY; /* more than a reply may list: say so, not a short list */
      return 1;
    }
    uint32_t cap = l->cap ? l->cap * 2 : 256;
    ddmc_class *v = ddmc__realloc(l->mem, l->v, (size_t)cap * sizeof(*v));
    if (v == NULL) {
      l->err = DDMC_JDWP_OUT_OF_MEMORY;
      return 1;
    }
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = c;
  return 0;
}

/* Every class, or those named sig when the VM can find them by name itself. */
static int all_classes(ddmc__dbg *d, const char *sig, class_list *l) {
  memset(l, 0, sizeof(*l));
  l->mem = d->mem;
  int rc = sig != NULL && DDMC__DBG_HAS(d, classes_named) ? DDMC__DBG_CALL(d, classes_named, sig, list_class, l)
                                                          : DDMC__DBG_CALL(d, for_each_class, list_class, l);
  if (rc == 0) rc = l->err;
  return rc;
}

/* [typeTag][refTypeID]([signature][generic])?[status] for each class; sig NULL: all of them. */
static int write_classes(ddmc__dbg *d, ddmc_buf *out, const char *sig, int with_sig, int with_generic) {
  class_list l;
  int rc = all_classes(d, sig, &l);
  if (rc != 0) {
    ddmc__free(d->mem, l.v);
    return rc;
  }
  size_t count = ddmc__dbg_count_begin(out);
  uint32_t n = 0;
  for (uint32_t i = 0; i < l.n && out->err == 0; i++) {
    const ddmc__dbg_cls *c;
    ddmc_class_info info;
    memset(&info, 0, sizeof(info));
    /* A class the VM no longer describes is left out; one the registry cannot take fails the
     * whole reply (a partial list would look complete). */
    if ((rc = ddmc__dbg_cls_get(d, l.v[i], &c)) == DDMC_JDWP_OUT_OF_MEMORY) break;
    if (rc != 0) {
      rc = 0;
      continue;
    }
    /* The registry's signature first: ClassesBySignature asks the VM about its one match, not
     * about every loaded class. */
    if (sig != NULL && strcmp(sig, c->signature) != 0) continue;
    if (d->bridge.class_info(d->vm_data, l.v[i], &info) != 0) continue;
    ddmc_buf_put_u8(out, c->type_tag);
    ddmc__dbg_wr_id(out, c->id);
    if (with_sig) ddmc__dbg_wr_string(out, c->signature);
    if (with_generic) ddmc__dbg_wr_string(out, info.generic);
    ddmc_buf_put_u32(out, info.status);
    n++;
  }
  ddmc__free(d->mem, l.v);
  if (rc != 0) return rc;
  if (out->err) return DDMC_JDWP_OUT_OF_MEMORY;
  ddmc__dbg_count_end(out, count, n);
  return 0;
}

static int vm_classes_by_signature(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  char sig[DDMC__MAX_SIGNATURE];
  int rc = ddmc__dbg_rd_string(in, sig, sizeof(sig));
  if (rc != 0) return rc;
  return write_classes(d, out, sig, 0, 0);
}

static int vm_all_classes(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) { return write_classes(d, out, NULL, 1, 0); }

static int vm_all_classes_generic(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  return write_classes(d, out, NULL, 1, 1);
}

typedef struct id_list {
  ddmc__dbg *d;
  ddmc_buf *out;
  uint32_t n;
  int err;
} id_list;

static int put_thread(void *arg, uint32_t thread, const ddmc_thread_detail *info) {
  id_list *l = arg;
  uint64_t id;
  int rc = ddmc__dbg_id_of_object(l->d, info->object, &id);
  if (rc != 0) {
    l->err = rc;
    return 1;
  }
  ddmc__dbg_wr_id(l->out, id);
  l->n++;
  return 0;
}

static int vm_all_threads(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  size_t count = ddmc__dbg_count_begin(out);
  id_list l = {d, out, 0, 0};
  int rc = ddmc__dbg_thr_for_each_object(d, put_thread, &l);
  if (rc == 0) rc = l.err;
  if (rc == 0 && out->err) rc = DDMC_JDWP_OUT_OF_MEMORY;
  if (rc == 0) ddmc__dbg_count_end(out, count, l.n);
  return rc;
}

static int put_top_group(void *arg, ddmc_ref group, ddmc_ref parent, const char *name) {
  id_list *l = arg;
  if (parent != 0) return 0;
  uint64_t id;
  int rc = ddmc__dbg_id_of_object(l->d, group, &id);
  if (rc != 0) {
    l->err = rc;
    return 1;
  }
  ddmc__dbg_wr_id(l->out, id);
  l->n++;
  return 0;
}

static int vm_top_level_thread_groups(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  size_t count = ddmc__dbg_count_begin(out);
  id_list l = {d, out, 0, 0};
  int rc = DDMC__DBG_CALL(d, for_each_group, put_top_group, &l);
  if (rc == 0) rc = l.err;
  if (rc == 0 && out->err) rc = DDMC_JDWP_OUT_OF_MEMORY;
  if (rc == 0) ddmc__dbg_count_end(out, count, l.n);
  return rc;
}

static int vm_dispose(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  int rc = ddmc__dbg_rd_end(in);
  if (rc != 0) return rc;
  /* The connection closes once the reply is out (src/jdwp/dispatch.c; not a relay's, which may
   * carry the next debugger); clean up now so nothing the debugger left suspended waits for that. */
  ddmc__dbg_reset(d);
  return 0;
}

static int vm_id_sizes(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  for (int i = 0; i < 5; i++) ddmc_buf_put_u32(out, 8); /* field, method, object, refType, frame */
  return 0;
}

static int vm_suspend(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  int rc = ddmc__dbg_rd_end(in);
  return rc != 0 ? rc : ddmc__dbg_thr_suspend_all(d);
}

static int vm_resume(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  int rc = ddmc__dbg_rd_end(in);
  if (rc == 0) atomic_fetch_add(&d->resumes, 1);
  return rc != 0 ? rc : ddmc__dbg_thr_resume_all(d);
}

/* Exit: the reply must reach the debugger before the process ends, and only the JDWP thread
 * writes it, so the exit happens on a thread of its own once the output is flushed. */
typedef struct exit_job {
  ddmc__dbg *d;
  int32_t status;
} exit_job;

static void *exit_main(void *arg) {
  exit_job job = *(exit_job *)arg;
  ddmc__free(job.d->mem, arg);
  ddmc__send_flush(job.d->vm, 1000);
  job.d->bridge.exit(job.d->vm_data, job.status);
  return NULL;
}

static int vm_exit(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  int32_t status = (int32_t)ddmc_read_u32(in);
  int rc = ddmc__dbg_rd_end(in);
  if (rc != 0) return rc;
  if (d->bridge.exit == NULL) return DDMC_JDWP_NOT_IMPLEMENTED;
  exit_job *job = ddmc__malloc(d->mem, sizeof(*job));
  if (job == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  job->d = d;
  job->status = status;
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  rc = pthread_create(&t, &attr, exit_main, job);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    ddmc__free(d->mem, job);
    return DDMC_JDWP_INTERNAL;
  }
  return 0;
}

static int vm_create_string(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t n = ddmc_read_u32(in);
  if (in->err || n > ddmc_reader_left(in)) return DDMC_JDWP_INVALID_LENGTH;
  if (n > DDMC__MAX_NEW_STRING) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  const char *s = (const char *)ddmc_read_bytes(in, n);
  ddmc_ref o = 0;
  int rc = ddmc__dbg_rd_end(in);
  if (rc != 0) return rc;
  rc = DDMC__DBG_CALL(d, create_string, s, (size_t)n, &o);
  if (rc != 0) return rc;
  uint64_t id;
  rc = ddmc__dbg_id_of_object(d, o, &id);
  if (rc == 0) ddmc__dbg_wr_id(out, id);
  return rc;
}

/* CapabilitiesNew in order; Capabilities is its first seven. */
static void capabilities(ddmc__dbg *d, uint8_t caps[32]) {
  memset(caps, 0, 32);
  caps[0] = caps[1] = DDMC__DBG_HAS(d, set_field_watch); /* canWatchFieldModification / Access */
  caps[2] = DDMC__DBG_HAS(d, bytecodes);                 /* canGetBytecodes */
  caps[3] = 1;                                           /* canGetSyntheticAttribute: the VM's modifiers say */
  caps[4] = DDMC__DBG_HAS(d, owned_monitors);            /* canGetOwnedMonitorInfo */
  caps[5] = DDMC__DBG_HAS(d, contended_monitor);         /* canGetCurrentContendedMonitor */
  caps[6] = DDMC__DBG_HAS(d, monitor_info);              /* canGetMonitorInfo */
  caps[7] = DDMC__DBG_HAS(d, redefine_classes);          /* canRedefineClasses */
  /* 8 canAddMethod, 9 canUnrestrictedlyRedefineClasses: never (bridge.h, redefine_classes) */
  caps[10] = DDMC__DBG_HAS(d, pop_frames);               /* canPopFrames */
  caps[11] = 1;                                          /* canUseInstanceFilters */
  caps[12] = DDMC__DBG_HAS(d, source_debug_extension);   /* canGetSourceDebugExtension */
  caps[13] = 1;                                          /* canRequestVMDeathEvent */
  caps[14] = DDMC__DBG_HAS(d, source_debug_extension);   /* canSetDefaultStratum: strata come from it */
  caps[15] = ddmc__dbg_mv_supported(d) != 0;             /* canGetInstanceInfo: the memory view */
  caps[16] = DDMC__DBG_HAS(d, set_monitor_events);       /* canRequestMonitorEvents */
  caps[17] = DDMC__DBG_HAS(d, owned_monitors);           /* canGetMonitorFrameInfo */
  caps[18] = 1;                                          /* canUseSourceNameFilters */
  caps[19] = DDMC__DBG_HAS(d, constant_pool);            /* canGetConstantPool */
  caps[20] = DDMC__DBG_HAS(d, force_early_return);       /* canForceEarlyReturn */
}

static int vm_capabilities(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint8_t caps[32];
  capabilities(d, caps);
  return ddmc_buf_put_bytes(out, caps, 7) ? DDMC_JDWP_OUT_OF_MEMORY : 0;
}

static int vm_capabilities_new(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint8_t caps[32];
  capabilities(d, caps);
  return ddmc_buf_put_bytes(out, caps, 32) ? DDMC_JDWP_OUT_OF_MEMORY : 0;
}

static int vm_class_paths(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc__dbg_wr_string(out, "");
  ddmc_buf_put_u32(out, 0);
  ddmc_buf_put_u32(out, 0);
  return 0;
}

static int vm_dispose_objects(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t n = ddmc_read_u32(in);
  if (in->err || n > ddmc_reader_left(in) / 12) return DDMC_JDWP_INVALID_LENGTH;
  if (ddmc_reader_left(in) != (size_t)n * 12) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t id = ddmc_read_u64(in);
    int32_t refs = (int32_t)ddmc_read_u32(in);
    if (refs > 0) ddmc__dbg_id_release(d, id, refs);
  }
  return 0;
}

static int vm_hold_events(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  if (ddmc__dbg_rd_end(in) != 0) return ddmc__dbg_rd_end(in);
  ddmc__dbg_events_hold(d, 1);
  return 0;
}

static int vm_release_events(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  if (ddmc__dbg_rd_end(in) != 0) return ddmc__dbg_rd_end(in);
  ddmc__dbg_events_hold(d, 0);
  return 0;
}

/* [string stratumID]: steps by line move by that stratum's lines from now on, for the session
 * ("" for the classes' own), as libjdwp steps (step.c, smap.c). A VM without
 * SourceDebugExtension has no strata: NOT_IMPLEMENTED (canSetDefaultStratum false). */
static int vm_set_default_stratum(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  char s[DDMC__MAX_STRATUM];
  int rc = ddmc__dbg_rd_string(in, s, sizeof(s));
  if (rc == 0) rc = ddmc__dbg_rd_end(in);
  if (rc != 0) return rc;
  if (!DDMC__DBG_HAS(d, source_debug_extension)) return DDMC_JDWP_NOT_IMPLEMENTED;
  ddmc__dbg_lines_set_stratum(d, s);
  return 0;
}

const ddmc__dbg_cmd ddmc__dbg_cmds_vm[] = {
    {1, 1, vm_version, "VirtualMachine.Version", NULL},
    {1, 2, vm_classes_by_signature, "VirtualMachine.ClassesBySignature", NULL},
    {1, 3, vm_all_classes, "VirtualMachine.AllClasses", NULL},
    {1, 4, vm_all_threads, "VirtualMachine.AllThreads", NULL},
    {1, 5, vm_top_level_thread_groups, "VirtualMachine.TopLevelThreadGroups", NULL},
    {1, 6, vm_dispose, "VirtualMachine.Dispose", NULL},
    {1, 7, vm_id_sizes, "VirtualMachine.IDSizes", NULL},
    {1, 8, vm_suspend, "VirtualMachine.Suspend", NULL},
    {1, 9, vm_resume, "VirtualMachine.Resume", NULL},
    {1, 10, vm_exit, "VirtualMachine.Exit", NULL},
    {1, 11, vm_create_string, "VirtualMachine.CreateString", NULL},
    {1, 12, vm_capabilities, "VirtualMachine.Capabilities", NULL},
    {1, 13, vm_class_paths, "VirtualMachine.ClassPaths", NULL},
    {1, 14, vm_dispose_objects, "VirtualMachine.DisposeObjects", NULL},
    {1, 15, vm_hold_events, "VirtualMachine.HoldEvents", NULL},
    {1, 16, vm_release_events, "VirtualMachine.ReleaseEvents", NULL},
    {1, 17, vm_capabilities_new, "VirtualMachine.CapabilitiesNew", NULL},
    {1, 19, vm_set_default_stratum, "VirtualMachine.SetDefaultStratum", NULL},
    {1, 20, vm_all_classes_generic, "VirtualMachine.AllClassesWithGeneric", NULL},
    {0, 0, NULL, NULL, NULL},
};
