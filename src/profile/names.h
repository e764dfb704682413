/* Names through the reflective bridge (the debugger's class_info, method_info, line_table), cached
 * for one report or one trace: a class or method is asked about once however many records name
 * it. Strings are copied (the bridge's are borrowed). Thread: one user at a time; the ops run on
 * the caller's thread (the JDWP thread). */
#ifndef DDMC_PROFILE_NAMES_H
#define DDMC_PROFILE_NAMES_H

#include "common.h"

typedef struct ddmc__nclass {
  ddmc_class c;
  char *sig;      /* the VM descriptor ("Ljava/lang/String;", "[I"); "?" when the bridge fails */
  char *file;     /* source file, "" when none */
  int32_t idx[2]; /* for the user (REAL's string indexes); -1 until set */
} ddmc__nclass;

typedef struct ddmc__nmethod {
  ddmc_class c;
  uint32_t m;
  const ddmc__nclass *cls;
  char *name;    /* "?" when the bridge fails */
  char *sig;     /* "()V" form; "?" when unknown */
  int native;    /* DDMC_ACC_NATIVE */
  int64_t *lidx; /* line table, index order */
  int32_t *lline;
  uint32_t nlines;
  int32_t idx; /* for the user; -1 until set */
} ddmc__nmethod;

typedef struct ddmc__names {
  const ddmc__mem *mem;
  const ddmc_vm_bridge *ops; /* may be NULL: every name is then "?" */
  void *data;
  void **cls; /* ddmc__nclass *, by number */
  uint32_t ncls, cls_cap, *cls_hash, cls_hcap;
  void **meth; /* ddmc__nmethod * */
  uint32_t nmeth, meth_cap, *meth_hash, meth_hcap;
} ddmc__names;

void ddmc__names_init(ddmc__names *n, const ddmc__mem *mem, const ddmc_vm_bridge *ops, void *data);
void ddmc__names_free(ddmc__names *n);
/* NULL only when out of memory. Valid until ddmc__names_free. */
ddmc__nclass *ddmc__names_class(ddmc__names *n, ddmc_class c);
ddmc__nmethod *ddmc__names_method(ddmc__names *n, ddmc_class c, uint32_t m);
/* The source line of instruction index in m, as REAL and the trace key want it: -2 for a native
 * method or index -1, -1 when the VM has no line information, else the line of the last table
 * entry at or before index. */
int32_t ddmc__names_line(const ddmc__nmethod *m, int64_t index);

/* "Lcom/x/Y;" -> "com.x.Y", "[I" -> "int[]", "[[LA;" -> "A[][]"; anything else unchanged. Writes at
 * most cap bytes including the NUL; returns out. */
char *ddmc__descriptor_to_dotted(const char *desc, char *out, size_t cap);

#endif
