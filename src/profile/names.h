/* SPDX-License-Identifier: Apache-2.0 */
/* Names through the reflective bridge (the debugger's class_info, method_info, line_table), cached
 * for one report or one trace: a class or method is asked about once however many records name
 * it. Strings are copied (the bridge's are borrowed). Thread: one user at a time; the ops run on
 * the caller's thread (the JDWP thread). */
#ifndef DDMC_PROFILE_NAMES_H
#define DDMC_PROFILE_NAMES_H

#include "common.h"

typedef struct ddmc__prof_nclass {
  ddmc_class c;
  char *sig;      /* the VM descriptor ("Ljava/lang/String;", "[I"); "?" when the bridge fails */
  char *file;     /* source file, "" when none */
  int32_t idx[2]; /* for the user (REAL's string indexes); -1 until set */
} ddmc__prof_nclass;

typedef struct ddmc__prof_nmethod {
  ddmc_class c;
  uint32_t m;
  const ddmc__prof_nclass *cls;
  char *name;    /* "?" when the bridge fails */
  char *sig;     /* "()V" form; "?" when unknown */
  int native;    /* DDMC_ACC_NATIVE */
  int64_t *lidx; /* line table, index order */
  int32_t *lline;
  uint32_t nlines;
  int32_t idx; /* for the user; -1 until set */
} ddmc__prof_nmethod;

typedef struct ddmc__prof_names {
  const ddmc__mem *mem;
  const ddmc_vm_bridge *bridge; /* may be NULL: every name is then "?" */
  void *data;
  void **cls; /* ddmc__prof_nclass *, by number */
  uint32_t ncls, cls_cap, *cls_hash, cls_hcap;
  void **meth; /* ddmc__prof_nmethod * */
  uint32_t nmeth, meth_cap, *meth_hash, meth_hcap;
} ddmc__prof_names;

void ddmc__prof_names_init(ddmc__prof_names *n, const ddmc__mem *mem, const ddmc_vm_bridge *bridge, void *data);
void ddmc__prof_names_free(ddmc__prof_names *n);
/* NULL only when out of memory. Valid until ddmc__prof_names_free. */
ddmc__prof_nclass *ddmc__prof_names_class(ddmc__prof_names *n, ddmc_class c);
ddmc__prof_nmethod *ddmc__prof_names_method(ddmc__prof_names *n, ddmc_class c, uint32_t m);
/* The source line of instruction index in m, as REAL and the trace key want it: -2 for a native
 * method or index -1, -1 when the VM has no line information, else the line of the last table
 * entry at or before index. */
int32_t ddmc__prof_names_line(const ddmc__prof_nmethod *m, int64_t index);

/* "Lcom/x/Y;" -> "com.x.Y", "[I" -> "int[]", "[[LA;" -> "A[][]"; anything else unchanged. Writes at
 * most cap bytes including the NUL; returns out. */
char *ddmc__prof_descriptor_to_dotted(const char *desc, char *out, size_t cap);

#endif
