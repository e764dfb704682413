/* SPDX-License-Identifier: Apache-2.0 */
/* Object tags (tags.c): SetTag / GetTag's weak tables, which heap.c's walks, hub_heap.c's GC
 * events (the sweep, ObjectFree) and GetObjectsWithTags use.
 *
 * Tags. Each environment has its own table, keyed by the VM's reference (ddmc_ref), made at its
 * first SetTag and bounded (DDMC__TAGS_MAX entries: past it SetTag answers OUT_OF_MEMORY). Its
 * entries are weak: they are no GC roots, and at each collection the VM's ddmc_gc_sweep drops
 * the entries of objects it frees (their tags wait, in space reserved with the table, for
 * ObjectFree at ddmc_gc_done). A moving collector's new addresses mark the table stale; the next
 * lookup outside the GC rehashes it (or scans it while it cannot). The table's mutex is a leaf,
 * never held across a callback or a VM op. */
#ifndef DDMC_JVMTI_TAGS_H
#define DDMC_JVMTI_TAGS_H

#include "jvmti/funcs.h"

#define DDMC__TAGS_MAX ((uint32_t)1 << 22) /* tagged objects per environment */
/* The key of a class that has no class object (a VM that gives arrays none): SetTag on its
 * jclass still works. Never swept (classes are not unloaded), never a VM reference (those stay
 * below 2^32, debugger.h). */
#define DDMC__CLASS_KEY(c) (((ddmc_ref)1 << 63) | (ddmc_ref)(c))

/* Every call takes the table's lock itself. */
typedef struct ddmc__jv_tags ddmc__jv_tags;
/* The environment's table, made when make is non-zero (NULL: none yet, or out of memory). */
ddmc__jv_tags *ddmc__jv_tags_of(ddmc__jv_jenv *e, int make);
/* 0 when ref has no tag. */
jlong ddmc__jv_tags_get(ddmc__jv_tags *t, ddmc_ref ref);
/* tag 0 removes. 0, or JVMTI_ERROR_OUT_OF_MEMORY (over DDMC__TAGS_MAX, or no memory). */
jvmtiError ddmc__jv_tags_set(ddmc__jv_tags *t, ddmc_ref ref, jlong tag);
/* Visits (ref, tag) of every entry until fn returns non-zero, under the lock: fn must not call
 * back into the table. */
void ddmc__jv_tags_each(ddmc__jv_tags *t, int (*fn)(void *arg, ddmc_ref ref, jlong tag), void *arg);
uint32_t ddmc__jv_tags_count(ddmc__jv_tags *t);
/* The GC's sweep (ddmc_gc_sweep): drops dead entries; keep_freed: keep their tags for ObjectFree. */
void ddmc__jv_tags_sweep(ddmc__jv_tags *t, ddmc_gc_is_live_fn is_live, void *arg, int keep_freed);
/* Takes up to max tags of freed objects (for ObjectFree); returns how many. */
uint32_t ddmc__jv_tags_take_freed(ddmc__jv_tags *t, jlong *out, uint32_t max);
void ddmc__jv_tags_destroy(ddmc__jv_tags *t);
/* Every environment's table (ddmc_vm_free). */
void ddmc__jv_tags_free(ddmc__jvmti *jv);

#endif
