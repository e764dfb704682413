/* SPDX-License-Identifier: Apache-2.0 */
/* Heap dumps in Android's hprof ("JAVA PROFILE 1.0.3", docs/protocol/profiling.md §6), for the HPDU and
 * HPDS chunks (chunks/hprof.c). The dump is built by the JDWP thread inside the bridge's
 * with_world_stopped, through for_each_class / class_info / field_info (classes), for_each_root
 * (roots), for_each_object with get_field / array_get (the objects), into memory bounded by
 * ddmc_prof_config.hprof_max_bytes. Nothing goes to the peer while the world is stopped; an HPDU
 * file is written beside the build by a thread of its own (hprof_file.c).
 *
 * The file, in order (what Dalvik and ART write):
 *   header   "JAVA PROFILE 1.0.3\0" [u4 4 = id size][u4 ms high][u4 ms low]
 *   0x01 STRING       per name (class names dotted as Android's: "java.lang.String", "int[]";
 *                     field names; the four heap names, all written before the heap dump)
 *   0x02 LOAD CLASS   per class: [u4 serial][ID class][u4 stack serial 0][ID name]
 *   0x05 STACK TRACE  the one dummy trace [u4 0][u4 0][u4 0] that every object names
 *   0x1C HEAP DUMP SEGMENT (split near every 1 MiB, at an object boundary), holding the roots (a
 *        ROOT tag below and the object ID, with what the kind adds),
 *        a CLASS DUMP per class, then every object: INSTANCE DUMP (this class's fields, then the
 *        superclass's...), OBJECT ARRAY DUMP, PRIMITIVE ARRAY DUMP (0x23 with the data: never
 *        0xC3, which hprof-conv mangles), with HEAP DUMP INFO (0xFE) before the first object of
 *        each heap in a segment (Dalvik's rule: a segment starts in the default heap)
 *   0x2C HEAP DUMP END
 * Every record's time is 0. IDs are the VM's refs (which must fit 32 bits below 0xF0000000);
 * a class without a class object (an array type, in some VMs) gets 0xF0000000 + n. */
#ifndef DDMC_PROFILE_HPROF_H
#define DDMC_PROFILE_HPROF_H

#include <sys/types.h>

#include "profile/hprof_conv.h"
#include "profile/hprof_out.h"
#include "vm_int.h"

/* Record tags, at the top level of the file and inside a heap dump segment, as listed above. */
enum {
  DDMC__HPROF_STRING = 0x01,
  DDMC__HPROF_LOAD_CLASS = 0x02,
  DDMC__HPROF_STACK_TRACE = 0x05,
  DDMC__HPROF_HEAP_DUMP_SEGMENT = 0x1C,
  DDMC__HPROF_HEAP_DUMP_END = 0x2C,
  /* sub-records of a segment */
  DDMC__HPROF_CLASS_DUMP = 0x20,
  DDMC__HPROF_INSTANCE_DUMP = 0x21,
  DDMC__HPROF_OBJECT_ARRAY_DUMP = 0x22,
  DDMC__HPROF_PRIMITIVE_ARRAY_DUMP = 0x23,
  DDMC__HPROF_HEAP_DUMP_INFO = 0xFE
};

/* Root sub-records of a segment: the standard hprof roots (0x01-0x08, and UNKNOWN 0xFF) and
 * Android's additions (0x89-0x8E), one per ddmc_gc_root_kind. */
enum {
  DDMC__HPROF_ROOT_UNKNOWN = 0xFF,
  DDMC__HPROF_ROOT_JNI_GLOBAL = 0x01,
  DDMC__HPROF_ROOT_JNI_LOCAL = 0x02,
  DDMC__HPROF_ROOT_JAVA_FRAME = 0x03,
  DDMC__HPROF_ROOT_NATIVE_STACK = 0x04,
  DDMC__HPROF_ROOT_STICKY_CLASS = 0x05,
  DDMC__HPROF_ROOT_THREAD_BLOCK = 0x06,
  DDMC__HPROF_ROOT_MONITOR_USED = 0x07,
  DDMC__HPROF_ROOT_THREAD_OBJECT = 0x08,
  DDMC__HPROF_ROOT_INTERNED_STRING = 0x89,
  DDMC__HPROF_ROOT_FINALIZING = 0x8A,
  DDMC__HPROF_ROOT_DEBUGGER = 0x8B,
  DDMC__HPROF_ROOT_VM_INTERNAL = 0x8D,
  DDMC__HPROF_ROOT_JNI_MONITOR = 0x8E
};

/* The largest hprof_max_bytes: the whole file goes in one HPDS chunk (a u4 length), and any
 * segment fits its u4 length. */
#define DDMC__HPROF_MAX_BYTES ((uint64_t)UINT32_MAX - ((uint64_t)1 << 20))

/* A finished dump: the whole file, as a chain of blocks. */
typedef struct ddmc__prof_hprof {
  ddmc__prof_hpout out;
  uint64_t len;
  uint64_t objects, classes, roots; /* what it holds, for the log */
} ddmc__prof_hprof;

/* Non-zero when the VM's bridge has every op a dump needs. */
int ddmc__prof_hprof_supported(const ddmc_vm *vm);
/* Builds a dump. Returns 0 and *out (free with ddmc__prof_hprof_free), or an error with why in msg:
 * DDMC_ENOTSUP (no bridge), DDMC_ETOOBIG (over hprof_max_bytes), DDMC_ENOMEM, DDMC_EIO (an op of
 * the bridge failed or gave something inconsistent). Counts the result in the profiling stats.
 * JDWP thread. */
int ddmc__prof_hprof_build(ddmc_vm *vm, ddmc__prof_hprof **out, char *msg, size_t msglen);
void ddmc__prof_hprof_free(ddmc_vm *vm, ddmc__prof_hprof *h);
/* HPDU: builds a dump and writes it to fd while it is built. A writer thread takes each 1 MiB
 * block once it is final, so the file is written beside the build (with the world stopped; the
 * VM's threads are not running then) and the dump never sits whole in memory. Returns what
 * ddmc__prof_hprof_build returns, with *out (ddmc__prof_hprof_free) holding only the length and counts;
 * *werr is the errno of a failed write (the build then stops with DDMC_EIO), else 0. JDWP
 * thread. hprof_file.c. */
int ddmc__prof_hprof_write(ddmc_vm *vm, int fd, ddmc__prof_hprof **out, int *werr, char *msg, size_t msglen);


/* ---- dumps by the VM's own dumper (the bridge's write_hprof; hprof_native.c, hprof_conv.c).
 * HPDU and HPDS use this first when the VM has the op, and the walk above when it has not or
 * it fails (but for ETOOBIG). JDWP thread. */
typedef struct ddmc__prof_hpnat ddmc__prof_hpnat;
/* Non-zero when the bridge has write_hprof. */
int ddmc__prof_hprof_native(const ddmc_vm *vm);
/* The VM writes its dump into a private directory (removed at once) and the first pass of the
 * conversion reads it, on a thread of its own while the VM writes it (joined before this
 * returns). Returns 0 and *out (ddmc__prof_hpnat_close), or DDMC_ENOTSUP (no op, or a file it
 * does not convert), DDMC_EIO (the VM's dumper failed), DDMC_ETOOBIG (over
 * hprof_max_bytes), DDMC_ENOMEM, with why in msg. */
int ddmc__prof_hpnat_open(ddmc_vm *vm, ddmc__prof_hpnat **out, char *msg, size_t msglen);
/* The length of the 1.0.3 file, known before its first byte. */
uint64_t ddmc__prof_hpnat_len(const ddmc__prof_hpnat *h);
/* Its next bytes: > 0, 0 at the end, or a negative DDMC_E* (logged). */
ssize_t ddmc__prof_hpnat_read(ddmc__prof_hpnat *h, uint8_t *dst, size_t cap);
/* All of it to fd, 256 KiB at a time, written by a thread of its own (joined before it returns)
 * while the next piece is converted. Returns 0 or a DDMC_E* of the conversion; *werr is the errno
 * of a failed write. */
int ddmc__prof_hpnat_write(ddmc__prof_hpnat *h, int fd, int *werr);
void ddmc__prof_hpnat_counts(const ddmc__prof_hpnat *h, uint64_t *objects, uint64_t *classes, uint64_t *roots,
                             uint64_t *dangling);
void ddmc__prof_hpnat_close(ddmc__prof_hpnat *h);

/* The converter's input reading *fd (a file open for reading) from its current offset; fd must
 * outlive the input. hprof_native.c; the bench drives the converter through it too. */
ddmc__prof_hpconv_input ddmc__prof_hpfile_input(int *fd);

#endif
