/* SPDX-License-Identifier: Apache-2.0 */
/* The environment-level JVM TI functions: phases, capabilities, event callbacks and
 * notification modes, memory, errors, version, system properties, timers, local storage and
 * DisposeEnvironment. Each checks its phase and its pointers first, as the specification lists
 * them, and changes nothing when it fails. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jvmti/funcs.h"
#include "hub/hub.h"
#include "vmctl/switches.h"

#define PHASE(jv) atomic_load_explicit(&(jv)->phase, memory_order_acquire)
#define ENV_CHECK(e)                                                            \
  do {                                                                          \
    if ((e) == NULL || (e)->jv == NULL) return JVMTI_ERROR_INVALID_ENVIRONMENT; \
    if (atomic_load(&(e)->disposed)) return JVMTI_ERROR_INVALID_ENVIRONMENT;    \
  } while (0)

void *ddmc__jv_alloc(size_t n) { return malloc(n ? n : 1); }

char *ddmc__jv_strdup(const char *s) {
  size_t n = strlen(s ? s : "");
  char *p = ddmc__jv_alloc(n + 1);
  if (p != NULL) memcpy(p, s ? s : "", n + 1);
  return p;
}

/* ---- memory (any phase). Allocate is malloc, so agents may free with either. */

jvmtiError ddmc__jv_jt_Allocate(ddmc__jv_jenv *e, jlong size, unsigned char **mem_ptr) {
  ENV_CHECK(e);
  if (mem_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  if (size < 0) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  if (size == 0) {
    *mem_ptr = NULL;
    return JVMTI_ERROR_NONE;
  }
  if ((uint64_t)size > SIZE_MAX) return JVMTI_ERROR_OUT_OF_MEMORY;
  unsigned char *p = malloc((size_t)size);
  if (p == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  *mem_ptr = p;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_Deallocate(ddmc__jv_jenv *e, unsigned char *mem) {
  ENV_CHECK(e);
  free(mem);
  return JVMTI_ERROR_NONE;
}

/* ---- phase, version, errors */

jvmtiError ddmc__jv_jt_GetPhase(ddmc__jv_jenv *e, jint *phase_ptr) {
  ENV_CHECK(e);
  if (phase_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  *phase_ptr = PHASE(e->jv);
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetVersionNumber(ddmc__jv_jenv *e, jint *version_ptr) {
  ENV_CHECK(e);
  if (version_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  *version_ptr = DDMC_JVMTI_VERSION_NOW;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetJLocationFormat(ddmc__jv_jenv *e, jint *format_ptr) {
  ENV_CHECK(e);
  if (format_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  *format_ptr = 2; /* JVMTI_JLOCATION_MACHINEPC: an instruction index, not a bytecode offset */
  return JVMTI_ERROR_NONE;
}

static const struct {
  int code;
  const char *name;
} g_errors[] = {
    {0, "JVMTI_ERROR_NONE"},
    {10, "JVMTI_ERROR_INVALID_THREAD"},
    {11, "JVMTI_ERROR_INVALID_THREAD_GROUP"},
    {12, "JVMTI_ERROR_INVALID_PRIORITY"},
    {13, "JVMTI_ERROR_THREAD_NOT_SUSPENDED"},
    {14, "JVMTI_ERROR_THREAD_SUSPENDED"},
    {15, "JVMTI_ERROR_THREAD_NOT_ALIVE"},
    {20, "JVMTI_ERROR_INVALID_OBJECT"},
    {21, "JVMTI_ERROR_INVALID_CLASS"},
    {22, "JVMTI_ERROR_CLASS_NOT_PREPARED"},
    {23, "JVMTI_ERROR_INVALID_METHODID"},
    {24, "JVMTI_ERROR_INVALID_LOCATION"},
    {25, "JVMTI_ERROR_INVALID_FIELDID"},
    {26, "JVMTI_ERROR_INVALID_MODULE"},
    {31, "JVMTI_ERROR_NO_MORE_FRAMES"},
    {32, "JVMTI_ERROR_OPAQUE_FRAME"},
    {34, "JVMTI_ERROR_TYPE_MISMATCH"},
    {35, "JVMTI_ERROR_INVALID_SLOT"},
    {40, "JVMTI_ERROR_DUPLICATE"},
    {41, "JVMTI_ERROR_NOT_FOUND"},
    {50, "JVMTI_ERROR_INVALID_MONITOR"},
    {51, "JVMTI_ERROR_NOT_MONITOR_OWNER"},
    {52, "JVMTI_ERROR_INTERRUPT"},
    {60, "JVMTI_ERROR_INVALID_CLASS_FORMAT"},
    {61, "JVMTI_ERROR_CIRCULAR_CLASS_DEFINITION"},
    {62, "JVMTI_ERROR_FAILS_VERIFICATION"},
    {63, "JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_ADDED"},
    {64, "JVMTI_ERROR_UNSUPPORTED_REDEFINITION_SCHEMA_CHANGED"},
    {65, "JVMTI_ERROR_INVALID_TYPESTATE"},
    {66, "JVMTI_ERROR_UNSUPPORTED_REDEFINITION_HIERARCHY_CHANGED"},
    {67, "JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_DELETED"},
    {68, "JVMTI_ERROR_UNSUPPORTED_VERSION"},
    {69, "JVMTI_ERROR_NAMES_DONT_MATCH"},
    {70, "JVMTI_ERROR_UNSUPPORTED_REDEFINITION_CLASS_MODIFIERS_CHANGED"},
    {71, "JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_MODIFIERS_CHANGED"},
    {72, "JVMTI_ERROR_UNSUPPORTED_REDEFINITION_CLASS_ATTRIBUTE_CHANGED"},
    {79, "JVMTI_ERROR_UNMODIFIABLE_CLASS"},
    {80, "JVMTI_ERROR_UNMODIFIABLE_MODULE"},
    {98, "JVMTI_ERROR_NOT_AVAILABLE"},
    {99, "JVMTI_ERROR_MUST_POSSESS_CAPABILITY"},
    {100, "JVMTI_ERROR_NULL_POINTER"},
    {101, "JVMTI_ERROR_ABSENT_INFORMATION"},
    {102, "JVMTI_ERROR_INVALID_EVENT_TYPE"},
    {103, "JVMTI_ERROR_ILLEGAL_ARGUMENT"},
    {104, "JVMTI_ERROR_NATIVE_METHOD"},
    {106, "JVMTI_ERROR_CLASS_LOADER_UNSUPPORTED"},
    {110, "JVMTI_ERROR_OUT_OF_MEMORY"},
    {111, "JVMTI_ERROR_ACCESS_DENIED"},
    {112, "JVMTI_ERROR_WRONG_PHASE"},
    {113, "JVMTI_ERROR_INTERNAL"},
    {115, "JVMTI_ERROR_UNATTACHED_THREAD"},
    {116, "JVMTI_ERROR_INVALID_ENVIRONMENT"},
};

static const char *error_name(int code) {
  for (size_t i = 0; i < sizeof(g_errors) / sizeof(g_errors[0]); i++)
    if (g_errors[i].code == code) return g_errors[i].name;
  return NULL;
}

jvmtiError ddmc__jv_jt_GetErrorName(ddmc__jv_jenv *e, jvmtiError error, char **name_ptr) {
  ENV_CHECK(e);
  if (name_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  const char *n = error_name(error);
  if (n == NULL) {
    *name_ptr = NULL;
    return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  }
  if ((*name_ptr = ddmc__jv_strdup(n)) == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  return JVMTI_ERROR_NONE;
}

/* ---- capabilities */

/* What the VM behind the bridge can do, honestly. */
static void potential_caps(ddmc__jvmti *jv, ddmc__jv_caps *out) {
  memset(out, 0, sizeof(*out));
  const ddmc_vm_bridge *o = jv->bridge;
  if (o == NULL) return;
  /* Only what the bridge can do and the hub delivers. */
  if (o->set_method_events) {
    ddmc__jv_cap_set(out, DDMC_CAP_can_generate_method_entry_events);
    ddmc__jv_cap_set(out, DDMC_CAP_can_generate_method_exit_events);
  }
  if (o->line_table) ddmc__jv_cap_set(out, DDMC_CAP_can_get_line_numbers);
  if (o->class_info) ddmc__jv_cap_set(out, DDMC_CAP_can_get_source_file_name);
  if (o->get_local && o->set_local && o->variable_table) ddmc__jv_cap_set(out, DDMC_CAP_can_access_local_variables);
  if (o->suspend_thread && o->resume_thread) ddmc__jv_cap_set(out, DDMC_CAP_can_suspend);
  /* The switches the VM shares with a JDWP debugger (src/vmctl), and the throws it reports
   * (ddmc_post_exception / _exception_catch). */
  if (o->set_breakpoint && o->clear_breakpoint && o->method_info)
    ddmc__jv_cap_set(out, DDMC_CAP_can_generate_breakpoint_events);
  if (o->set_stepping) ddmc__jv_cap_set(out, DDMC_CAP_can_generate_single_step_events);
  if (o->set_field_watch) {
    ddmc__jv_cap_set(out, DDMC_CAP_can_generate_field_access_events);
    ddmc__jv_cap_set(out, DDMC_CAP_can_generate_field_modification_events);
  }
  if (o->object_class) ddmc__jv_cap_set(out, DDMC_CAP_can_generate_exception_events);
  ddmc__jv_cap_set(out, DDMC_CAP_can_maintain_original_method_order); /* methods in declaration order */
  /* reflection (reflect.c) */
  if (o->bytecodes) ddmc__jv_cap_set(out, DDMC_CAP_can_get_bytecodes);
  if (o->constant_pool) ddmc__jv_cap_set(out, DDMC_CAP_can_get_constant_pool);
  if (o->source_debug_extension) ddmc__jv_cap_set(out, DDMC_CAP_can_get_source_debug_extension);
  /* ---- threads and monitors (suspend.c, monitors.c, hub_monitor.c) */
  if (o->owned_monitors) {
    ddmc__jv_cap_set(out, DDMC_CAP_can_get_owned_monitor_info);
    ddmc__jv_cap_set(out, DDMC_CAP_can_get_owned_monitor_stack_depth_info);
  }
  if (o->contended_monitor) ddmc__jv_cap_set(out, DDMC_CAP_can_get_current_contended_monitor);
  if (o->monitor_info) ddmc__jv_cap_set(out, DDMC_CAP_can_get_monitor_info);
  if (o->set_monitor_events) ddmc__jv_cap_set(out, DDMC_CAP_can_generate_monitor_events);
  if (o->pop_frames) ddmc__jv_cap_set(out, DDMC_CAP_can_pop_frame);
  if (o->redefine_classes) ddmc__jv_cap_set(out, DDMC_CAP_can_redefine_classes);
  if (o->force_early_return) ddmc__jv_cap_set(out, DDMC_CAP_can_force_early_return);
  /* heap: tags need the whole-heap walk; their weak sweep and the GC events come from
   * the VM's GC hooks (ddmc_gc_start / _sweep / _done), VMObjectAlloc from its allocation hook. */
  if (o->with_world_stopped && o->for_each_object) {
    ddmc__jv_cap_set(out, DDMC_CAP_can_tag_objects);
    ddmc__jv_cap_set(out, DDMC_CAP_can_generate_object_free_events);
    ddmc__jv_cap_set(out, DDMC_CAP_can_generate_garbage_collection_events);
  }
  if (o->collect) ddmc__jv_cap_set(out, DDMC_CAP_can_generate_garbage_collection_events);
  ddmc__jv_cap_set(out, DDMC_CAP_can_generate_vm_object_alloc_events);
}

jvmtiError ddmc__jv_jt_GetPotentialCapabilities(ddmc__jv_jenv *e, ddmc__jv_caps *capabilities_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_ONLOAD | JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (capabilities_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  potential_caps(e->jv, capabilities_ptr);
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_AddCapabilities(ddmc__jv_jenv *e, const ddmc__jv_caps *capabilities_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_ONLOAD | JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (capabilities_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jv_caps pot;
  potential_caps(e->jv, &pot);
  for (int i = 0; i < 4; i++)
    if (capabilities_ptr->w[i] & ~pot.w[i]) return JVMTI_ERROR_NOT_AVAILABLE; /* nothing added */
  ddmc__lock(&e->jv->lock);
  for (int i = 0; i < 4; i++) e->caps.w[i] |= capabilities_ptr->w[i];
  ddmc__unlock(&e->jv->lock);
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_RelinquishCapabilities(ddmc__jv_jenv *e, const ddmc__jv_caps *capabilities_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_ONLOAD | JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (capabilities_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__lock(&e->jv->lock);
  for (int i = 0; i < 4; i++) e->caps.w[i] &= ~capabilities_ptr->w[i];
  ddmc__unlock(&e->jv->lock);
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetCapabilities(ddmc__jv_jenv *e, ddmc__jv_caps *capabilities_ptr) {
  ENV_CHECK(e);
  if (capabilities_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__lock(&e->jv->lock);
  *capabilities_ptr = e->caps;
  ddmc__unlock(&e->jv->lock);
  return JVMTI_ERROR_NONE;
}

/* ---- events */

/* The capability an event needs, or -1 for none. */
static int event_capability(int ev) {
  switch (ev) {
    case JVMTI_EVENT_METHOD_ENTRY: return DDMC_CAP_can_generate_method_entry_events;
    case JVMTI_EVENT_METHOD_EXIT: return DDMC_CAP_can_generate_method_exit_events;
    case JVMTI_EVENT_SINGLE_STEP: return DDMC_CAP_can_generate_single_step_events;
    case JVMTI_EVENT_BREAKPOINT: return DDMC_CAP_can_generate_breakpoint_events;
    case JVMTI_EVENT_FRAME_POP: return DDMC_CAP_can_generate_frame_pop_events;
    case JVMTI_EVENT_EXCEPTION:
    case JVMTI_EVENT_EXCEPTION_CATCH: return DDMC_CAP_can_generate_exception_events;
    case JVMTI_EVENT_FIELD_ACCESS: return DDMC_CAP_can_generate_field_access_events;
    case JVMTI_EVENT_FIELD_MODIFICATION: return DDMC_CAP_can_generate_field_modification_events;
    case JVMTI_EVENT_MONITOR_WAIT:
    case JVMTI_EVENT_MONITOR_WAITED:
    case JVMTI_EVENT_MONITOR_CONTENDED_ENTER:
    case JVMTI_EVENT_MONITOR_CONTENDED_ENTERED: return DDMC_CAP_can_generate_monitor_events;
    case JVMTI_EVENT_GARBAGE_COLLECTION_START:
    case JVMTI_EVENT_GARBAGE_COLLECTION_FINISH: return DDMC_CAP_can_generate_garbage_collection_events;
    case JVMTI_EVENT_OBJECT_FREE: return DDMC_CAP_can_generate_object_free_events;
    case JVMTI_EVENT_VM_OBJECT_ALLOC: return DDMC_CAP_can_generate_vm_object_alloc_events;
    case JVMTI_EVENT_COMPILED_METHOD_LOAD:
    case JVMTI_EVENT_COMPILED_METHOD_UNLOAD: return DDMC_CAP_can_generate_compiled_method_load_events;
    case JVMTI_EVENT_NATIVE_METHOD_BIND: return DDMC_CAP_can_generate_native_method_bind_events;
    case JVMTI_EVENT_SAMPLED_OBJECT_ALLOC: return DDMC_CAP_can_generate_sampled_object_alloc_events;
    default: return -1;
  }
}

static int valid_event(int ev) {
  if (ev < DDMC__JEV_FIRST || ev > DDMC__JEV_LAST) return 0;
  return ev != 72 && !(ev >= 77 && ev <= 79) && ev != 85;
}

/* Events that cannot be enabled per thread (the specification's list). */
static int global_only(int ev) {
  switch (ev) {
    case JVMTI_EVENT_VM_INIT:
    case JVMTI_EVENT_VM_START:
    case JVMTI_EVENT_VM_DEATH:
    case JVMTI_EVENT_THREAD_START:
    case JVMTI_EVENT_COMPILED_METHOD_LOAD:
    case JVMTI_EVENT_COMPILED_METHOD_UNLOAD:
    case JVMTI_EVENT_DYNAMIC_CODE_GENERATED:
    case JVMTI_EVENT_DATA_DUMP_REQUEST: return 1;
    default: return 0;
  }
}

static int env_wants(ddmc__jv_jenv *e, int i) {
  return atomic_load(&e->global[i]) || atomic_load(&e->nthread_enables[i]) > 0;
}

/* Called with the change made, outside jv->lock. before/after: did e want event i. */
static void want_changed(ddmc__jvmti *jv, int i, int before, int after) {
  if (before == after) return;
  atomic_fetch_add(&jv->want[i], after ? 1 : -1);
  int me = atomic_load(&jv->want[JVMTI_EVENT_METHOD_ENTRY - DDMC__JEV_FIRST]) > 0 ||
           atomic_load(&jv->want[JVMTI_EVENT_METHOD_EXIT - DDMC__JEV_FIRST]) > 0;
  if (atomic_exchange(&jv->method_events_on, me) != me) ddmc__ctl_method_events(jv->vm, DDMC__ME_AGENT, me);
  int mon = 0;
  for (int k = JVMTI_EVENT_MONITOR_WAIT; k <= JVMTI_EVENT_MONITOR_CONTENDED_ENTERED; k++)
    mon |= atomic_load(&jv->want[k - DDMC__JEV_FIRST]) > 0;
  if (atomic_exchange(&jv->monitor_events_on, mon) != mon) ddmc__ctl_monitor_events(jv->vm, DDMC__ME_AGENT, mon);
  /* heap: VMObjectAlloc rides on the allocation hook's flag. */
  if (i == JVMTI_EVENT_VM_OBJECT_ALLOC - DDMC__JEV_FIRST)
    ddmc__hub_alloc_want(jv->vm, DDMC__ALLOC_AGENTS, atomic_load(&jv->want[i]) > 0);
}

jvmtiError ddmc__jv_jt_SetEventNotificationMode(ddmc__jv_jenv *e, jint mode, jint event_type, jthread event_thread,
                                                ...) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_ONLOAD | JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (mode != JVMTI_ENABLE && mode != JVMTI_DISABLE) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  if (!valid_event(event_type)) return JVMTI_ERROR_INVALID_EVENT_TYPE;
  int cap = event_capability(event_type);
  ddmc__jvmti *jv = e->jv;
  if (cap >= 0 && mode == JVMTI_ENABLE) {
    ddmc__lock(&jv->lock);
    int has = ddmc__jv_cap_has(&e->caps, cap);
    ddmc__unlock(&jv->lock);
    if (!has) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  }
  int i = event_type - DDMC__JEV_FIRST;
  if (event_thread == NULL) {
    int before = env_wants(e, i);
    atomic_store(&e->global[i], (unsigned char)(mode == JVMTI_ENABLE));
    want_changed(jv, i, before, env_wants(e, i));
    if (event_type == JVMTI_EVENT_SINGLE_STEP) ddmc__jv_step_sync(jv);
    return JVMTI_ERROR_NONE;
  }
  if (global_only(event_type)) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  uint32_t thread;
  if ((rc = ddmc__jv_thread_of(jv, event_thread, &thread)) != 0) return rc;
  int before = env_wants(e, i);
  rc = JVMTI_ERROR_NONE;
  ddmc__lock(&jv->lock);
  uint32_t k;
  for (k = 0; k < e->nte; k++)
    if (e->te[k].ev == i && e->te[k].thread == thread) break;
  if (mode == JVMTI_ENABLE && k == e->nte) {
    if (e->nte == DDMC__MAX_THREAD_ENABLES)
      rc = JVMTI_ERROR_OUT_OF_MEMORY;
    else {
      e->te[e->nte++] = (ddmc__jv_thread_enable){thread, (uint8_t)i};
      atomic_fetch_add(&e->nthread_enables[i], 1);
    }
  } else if (mode == JVMTI_DISABLE && k < e->nte) {
    e->te[k] = e->te[--e->nte];
    atomic_fetch_sub(&e->nthread_enables[i], 1);
  }
  ddmc__unlock(&jv->lock);
  want_changed(jv, i, before, env_wants(e, i));
  if (event_type == JVMTI_EVENT_SINGLE_STEP) ddmc__jv_step_sync(jv);
  return rc;
}

jvmtiError ddmc__jv_jt_SetEventCallbacks(ddmc__jv_jenv *e, const ddmc__jv_fnptr *callbacks, jint size_of_callbacks) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_ONLOAD | JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (size_of_callbacks < 0) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  /* NULL: no callbacks. A smaller table (an older header) leaves the rest NULL; slots past what
   * this library knows are ignored. */
  size_t n = callbacks == NULL ? 0 : (size_t)size_of_callbacks / sizeof(ddmc__jv_fnptr);
  ddmc__lock(&e->jv->lock);
  for (size_t i = 0; i < DDMC__JEV_COUNT; i++) atomic_store(&e->cb[i], i < n ? callbacks[i] : NULL);
  ddmc__unlock(&e->jv->lock);
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GenerateEvents(ddmc__jv_jenv *e, jint event_type) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  /* CompiledMethodLoad and DynamicCodeGenerated: an interpreter compiles nothing. */
  if (event_type == JVMTI_EVENT_COMPILED_METHOD_LOAD) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (event_type == JVMTI_EVENT_DYNAMIC_CODE_GENERATED) return JVMTI_ERROR_NONE;
  return JVMTI_ERROR_ILLEGAL_ARGUMENT;
}

/* ---- environment local storage, dispose */

jvmtiError ddmc__jv_jt_GetEnvironmentLocalStorage(ddmc__jv_jenv *e, void **data_ptr) {
  ENV_CHECK(e);
  if (data_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  *data_ptr = atomic_load(&e->local_storage);
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_SetEnvironmentLocalStorage(ddmc__jv_jenv *e, const void *data) {
  ENV_CHECK(e);
  atomic_store(&e->local_storage, (void *)data);
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_DisposeEnvironment(ddmc__jv_jenv *e) {
  ENV_CHECK(e);
  /* Every event off (so the VM's method events go when no one wants them), callbacks gone,
   * capabilities back. The struct stays until the VM is freed: a callback in flight on
   * another thread may still read it. */
  for (int i = 0; i < DDMC__JEV_COUNT; i++) {
    int before = env_wants(e, i);
    atomic_store(&e->global[i], 0);
    ddmc__lock(&e->jv->lock);
    for (uint32_t k = 0; k < e->nte;)
      if (e->te[k].ev == i) {
        e->te[k] = e->te[--e->nte];
        atomic_fetch_sub(&e->nthread_enables[i], 1);
      } else
        k++;
    atomic_store(&e->cb[i], NULL);
    ddmc__unlock(&e->jv->lock);
    want_changed(e->jv, i, before, env_wants(e, i));
  }
  ddmc__jv_jenv_clear_debug(e);
  ddmc__lock(&e->jv->lock);
  memset(&e->caps, 0, sizeof(e->caps));
  ddmc__unlock(&e->jv->lock);
  atomic_store(&e->disposed, 1);
  ddmc__jv_step_sync(e->jv);
  return JVMTI_ERROR_NONE;
}

/* ---- system properties (OnLoad and live). The VM sets them with ddmc_agent_set_property. */

jvmtiError ddmc__jv_jt_GetSystemProperties(ddmc__jv_jenv *e, jint *count_ptr, char ***property_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_ONLOAD | JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (count_ptr == NULL || property_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  ddmc__lock(&jv->lock);
  uint32_t n = jv->nprops;
  char **v = ddmc__jv_alloc(sizeof(char *) * (n ? n : 1));
  uint32_t i = 0;
  for (; v != NULL && i < n; i++)
    if ((v[i] = ddmc__jv_strdup(jv->props[i].key)) == NULL) break;
  ddmc__unlock(&jv->lock);
  if (v == NULL || i < n) {
    while (v != NULL && i > 0) free(v[--i]);
    free(v);
    return JVMTI_ERROR_OUT_OF_MEMORY;
  }
  *count_ptr = (jint)n;
  *property_ptr = v;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetSystemProperty(ddmc__jv_jenv *e, const char *property, char **value_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_ONLOAD | JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (property == NULL || value_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  rc = JVMTI_ERROR_NOT_AVAILABLE;
  ddmc__lock(&jv->lock);
  for (uint32_t i = 0; i < jv->nprops; i++)
    if (strcmp(jv->props[i].key, property) == 0) {
      *value_ptr = ddmc__jv_strdup(jv->props[i].value);
      rc = *value_ptr ? JVMTI_ERROR_NONE : JVMTI_ERROR_OUT_OF_MEMORY;
      break;
    }
  ddmc__unlock(&jv->lock);
  return rc;
}

jvmtiError ddmc__jv_jt_SetSystemProperty(ddmc__jv_jenv *e, const char *property, const char *value_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_ONLOAD);
  if (rc) return rc;
  if (property == NULL) return JVMTI_ERROR_NULL_POINTER;
  return JVMTI_ERROR_NOT_AVAILABLE; /* every property of this VM is read-only */
}

/* ---- timers */

jvmtiError ddmc__jv_jt_GetTimerInfo(ddmc__jv_jenv *e, ddmc__jv_jtimer_info *info_ptr) {
  ENV_CHECK(e);
  if (info_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  memset(info_ptr, 0, sizeof(*info_ptr));
  info_ptr->max_value = INT64_MAX; /* nanoseconds of CLOCK_MONOTONIC */
  info_ptr->may_skip_forward = 0;
  info_ptr->may_skip_backward = 0;
  info_ptr->kind = JVMTI_TIMER_ELAPSED;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetTime(ddmc__jv_jenv *e, jlong *nanos_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_START | JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (nanos_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  *nanos_ptr = (jlong)ts.tv_sec * 1000000000 + ts.tv_nsec;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetAvailableProcessors(ddmc__jv_jenv *e, jint *processor_count_ptr) {
  ENV_CHECK(e);
  if (processor_count_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  *processor_count_ptr = n > 0 ? (jint)n : 1;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_SetVerboseFlag(ddmc__jv_jenv *e, jint flag, jboolean value) {
  ENV_CHECK(e);
  if (flag != 0 && flag != 1 && flag != 2 && flag != 4) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  return JVMTI_ERROR_NONE; /* accepted: this VM prints nothing more */
}
