/* SPDX-License-Identifier: Apache-2.0 */
/* Checks, in debug builds, that the library calls each bridge op only under the library locks the
 * op's comment in include/ddmc/bridge.h allows ("Locks:"; every other op: none). ddmc_vm_set_bridge
 * installs a table of shims in front of the VM's ops; each asserts ddmc__locks_only (lock.h) and
 * calls the VM's op. scripts/check_bridge_locks.py keeps this list and the header's comments equal;
 * the static assertion in bridge_check.c fails the build when an op is added without a line here.
 * Release builds (NDEBUG) install the VM's table as it is. */
#ifndef DDMC_BRIDGE_CHECK_H
#define DDMC_BRIDGE_CHECK_H

#include "ddmc/bridge.h"
#include "lock.h"

/* X(op, locks allowed, parameters, arguments) for ops returning int; XV for void ones. D is the
 * VM's own vm_data. In the order of struct ddmc_vm_bridge. */
#define DDMC__BRIDGE_OPS(X, XV) \
  X(for_each_class, 0, (void *vm_data, ddmc_class_visit_fn fn, void *arg), (D, fn, arg)) \
  X(class_info, 0, (void *vm_data, ddmc_class c, ddmc_class_info *out), (D, c, out)) \
  X(class_interface, 0, (void *vm_data, ddmc_class c, uint32_t index, ddmc_class *out), (D, c, index, out)) \
  X(field_info, 0, (void *vm_data, ddmc_class c, uint32_t field, ddmc_field_info *out), (D, c, field, out)) \
  X(method_info, 0, (void *vm_data, ddmc_class c, uint32_t method, ddmc_method_info *out), (D, c, method, out)) \
  X(line_table, 0, (void *vm_data, ddmc_class c, uint32_t method, ddmc_line_visit_fn fn, void *arg), (D, c, method, fn, arg)) \
  X(variable_table, 0, (void *vm_data, ddmc_class c, uint32_t method, ddmc_variable_visit_fn fn, void *arg), (D, c, method, fn, arg)) \
  X(object_class, 0, (void *vm_data, ddmc_ref o, ddmc_class *out), (D, o, out)) \
  X(get_field, 0, (void *vm_data, ddmc_ref o, ddmc_class c, uint32_t field, ddmc_value *out), (D, o, c, field, out)) \
  X(set_field, 0, (void *vm_data, ddmc_ref o, ddmc_class c, uint32_t field, const ddmc_value *v), (D, o, c, field, v)) \
  X(string_value, 0, (void *vm_data, ddmc_ref s, ddmc_buf *out), (D, s, out)) \
  X(create_string, 0, (void *vm_data, const char *utf8, size_t n, ddmc_ref *out), (D, utf8, n, out)) \
  X(array_length, 0, (void *vm_data, ddmc_ref a, int32_t *out), (D, a, out)) \
  X(array_get, 0, (void *vm_data, ddmc_ref a, int32_t first, int32_t n, ddmc_value *out), (D, a, first, n, out)) \
  X(array_set, 0, (void *vm_data, ddmc_ref a, int32_t first, int32_t n, const ddmc_value *v), (D, a, first, n, v)) \
  X(new_array, 0, (void *vm_data, ddmc_class c, int32_t length, ddmc_ref *out), (D, c, length, out)) \
  X(object_size, 0, (void *vm_data, ddmc_ref o, uint64_t *out), (D, o, out)) \
  X(object_hash, 0, (void *vm_data, ddmc_ref o, int32_t *out), (D, o, out)) \
  X(thread_info, DDMC__LOCKS(DDMC__LOCK_SUSPEND), (void *vm_data, uint32_t thread, ddmc_thread_detail *out), (D, thread, out)) \
  X(for_each_group, 0, (void *vm_data, ddmc_group_visit_fn fn, void *arg), (D, fn, arg)) \
  X(for_each_debuggee_thread, DDMC__LOCKS(DDMC__LOCK_SUSPEND), (void *vm_data, ddmc_thread_object_visit_fn fn, void *arg), (D, fn, arg)) \
  X(main_thread, 0, (void *vm_data, uint32_t *out), (D, out)) \
  X(frame_count, 0, (void *vm_data, uint32_t thread, int32_t *out), (D, thread, out)) \
  X(frame_location, 0, (void *vm_data, uint32_t thread, int32_t depth, ddmc_location *out), (D, thread, depth, out)) \
  X(frame_this, 0, (void *vm_data, uint32_t thread, int32_t depth, ddmc_ref *out), (D, thread, depth, out)) \
  X(get_local, 0, (void *vm_data, uint32_t thread, int32_t depth, int32_t slot, char tag, ddmc_value *out), (D, thread, depth, slot, tag, out)) \
  X(set_local, 0, (void *vm_data, uint32_t thread, int32_t depth, int32_t slot, const ddmc_value *v), (D, thread, depth, slot, v)) \
  X(monitor_info, 0, (void *vm_data, ddmc_ref obj, uint32_t *owner, int32_t *entry_count, ddmc_thread_id_visit_fn waiter, void *arg), (D, obj, owner, entry_count, waiter, arg)) \
  X(owned_monitors, 0, (void *vm_data, uint32_t thread, ddmc_monitor_visit_fn fn, void *arg), (D, thread, fn, arg)) \
  X(contended_monitor, 0, (void *vm_data, uint32_t thread, ddmc_ref *out), (D, thread, out)) \
  X(suspend_thread, DDMC__LOCKS(DDMC__LOCK_SUSPEND), (void *vm_data, uint32_t thread), (D, thread)) \
  X(resume_thread, DDMC__LOCKS(DDMC__LOCK_SUSPEND), (void *vm_data, uint32_t thread), (D, thread)) \
  XV(thread_parking, 0, (void *vm_data, uint32_t thread, int parked), (D, thread, parked)) \
  X(interrupt_thread, 0, (void *vm_data, uint32_t thread), (D, thread)) \
  X(stop_thread, 0, (void *vm_data, uint32_t thread, ddmc_ref exc), (D, thread, exc)) \
  X(set_breakpoint, DDMC__LOCKS(DDMC__LOCK_SWITCHES), (void *vm_data, const ddmc_location *loc), (D, loc)) \
  X(clear_breakpoint, DDMC__LOCKS(DDMC__LOCK_SWITCHES), (void *vm_data, const ddmc_location *loc), (D, loc)) \
  X(set_stepping, DDMC__LOCKS(DDMC__LOCK_SWITCHES), (void *vm_data, uint32_t thread, int on), (D, thread, on)) \
  X(set_field_watch, DDMC__LOCKS(DDMC__LOCK_SWITCHES), (void *vm_data, ddmc_class c, uint32_t field, unsigned watch), (D, c, field, watch)) \
  X(set_method_events, DDMC__LOCKS(DDMC__LOCK_SWITCHES), (void *vm_data, int on), (D, on)) \
  XV(set_monitor_events, DDMC__LOCKS(DDMC__LOCK_SWITCHES), (void *vm_data, int on), (D, on)) \
  X(invoke, 0, (void *vm_data, uint32_t thread, ddmc_class c, uint32_t method, ddmc_ref this_obj, const ddmc_value *args, int32_t nargs, int options, ddmc_value *result, ddmc_ref *exception), (D, thread, c, method, this_obj, args, nargs, options, result, exception)) \
  XV(exit, 0, (void *vm_data, int32_t status), (D, status)) \
  X(with_world_stopped, 0, (void *vm_data, ddmc_stopped_fn fn, void *arg), (D, fn, arg)) \
  X(for_each_object, 0, (void *vm_data, ddmc_heap_object_visit_fn fn, void *arg), (D, fn, arg)) \
  X(for_each_root, 0, (void *vm_data, ddmc_gc_root_visit_fn fn, void *arg), (D, fn, arg)) \
  X(collect, 0, (void *vm_data), (D)) \
  X(start_agent_thread, 0, (void *vm_data, ddmc_ref thread_obj, int32_t priority, void (*run)(void *arg, uint32_t thread), void *arg, uint32_t *out_thread), (D, thread_obj, priority, run, arg, out_thread)) \
  X(hold_ref, 0, (void *vm_data, ddmc_ref o, int strong), (D, o, strong)) \
  XV(release_ref, 0, (void *vm_data, ddmc_ref o), (D, o)) \
  X(instance_counts, 0, (void *vm_data, const ddmc_class *classes, int32_t n, int64_t *counts), (D, classes, n, counts)) \
  X(instances, 0, (void *vm_data, ddmc_class c, int32_t max, int (*fn)(void *arg, ddmc_ref o), void *arg), (D, c, max, fn, arg)) \
  X(referring_objects, 0, (void *vm_data, ddmc_ref o, int32_t max, int (*fn)(void *arg, ddmc_ref r), void *arg), (D, o, max, fn, arg)) \
  X(redefine_classes, 0, (void *vm_data, uint32_t n, const ddmc_class *classes, const uint8_t *const *bytes, const uint32_t *lengths), (D, n, classes, bytes, lengths)) \
  X(pop_frames, 0, (void *vm_data, uint32_t thread, int32_t n), (D, thread, n)) \
  X(force_early_return, 0, (void *vm_data, uint32_t thread, const ddmc_value *v), (D, thread, v)) \
  X(bytecodes, 0, (void *vm_data, ddmc_class c, uint32_t method, ddmc_buf *out), (D, c, method, out)) \
  X(constant_pool, 0, (void *vm_data, ddmc_class c, int32_t *count, ddmc_buf *out), (D, c, count, out)) \
  X(class_file_version, 0, (void *vm_data, ddmc_class c, int32_t *major, int32_t *minor), (D, c, major, minor)) \
  X(source_debug_extension, 0, (void *vm_data, ddmc_class c, ddmc_buf *out), (D, c, out)) \
  X(for_each_module, 0, (void *vm_data, int (*fn)(void *arg, ddmc_ref module), void *arg), (D, fn, arg)) \
  X(class_module, 0, (void *vm_data, ddmc_class c, ddmc_ref *out), (D, c, out)) \
  X(module_info, 0, (void *vm_data, ddmc_ref m, ddmc_buf *name, ddmc_ref *loader), (D, m, name, loader)) \
  X(frame_locations, 0, (void *vm_data, uint32_t thread, int32_t first, int32_t n, ddmc_location *out), (D, thread, first, n, out)) \
  X(write_hprof, 0, (void *vm_data, const char *path, char *msg, size_t msglen), (D, path, msg, msglen)) \
  X(classes_named, 0, (void *vm_data, const char *sig, ddmc_class_visit_fn fn, void *arg), (D, sig, fn, arg)) \
  X(suspend_threads, DDMC__LOCKS(DDMC__LOCK_SUSPEND), (void *vm_data, const uint32_t *threads, uint32_t n, int *errs), (D, threads, n, errs)) \
  X(resume_threads, DDMC__LOCKS(DDMC__LOCK_SUSPEND), (void *vm_data, const uint32_t *threads, uint32_t n, int *errs), (D, threads, n, errs))

typedef struct ddmc__bridge_check {
  ddmc_vm_bridge vm;  /* the VM's ops */
  void *vm_data;      /* the VM's data */
} ddmc__bridge_check;

/* Fills *out with a shim for each op the VM has (NULL stays NULL); the shims take chk as their
 * vm_data. chk must outlive every call. Only with DDMC__LOCK_CHECK. */
void ddmc__bridge_check_wrap(ddmc__bridge_check *chk, ddmc_vm_bridge *out);

#endif
