/* SPDX-License-Identifier: Apache-2.0 */
/* Chunk payload parsers and UTF-16 <-> UTF-8 conversion for the host side.
 *
 * Every parser is a pure function over (p, n) that never reads outside it: all reads go through
 * the bounded cursor in host_int.h, and every count read from the wire is checked against the
 * bytes that remain BEFORE anything is allocated for it, so a hostile count of 0xffffffff costs
 * nothing. Payloads come from a VM we do not trust (or from a fuzzer): fail with DDMC_EPROTO,
 * never assert. Layouts are in ddmc_host.h and docs/protocol/ddm-wire.md §2. */
#include <stdlib.h>
#include <string.h>

#include "ddmc_host.h"
#include "host_int.h"

/* ---- strings --------------------------------------------------------------------------------- */

static size_t put_utf8(char *o, uint32_t cp) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xc0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | (cp >> 18));
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  o[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

int ddmc_host_utf16be_to_utf8(const uint8_t *p, size_t units, char **out) {
  if (!out || (!p && units)) return DDMC_EINVAL;
  *out = NULL;
  /* One unit gives at most 3 bytes; a surrogate pair (2 units) gives 4. */
  if (units > (SIZE_MAX - 1) / 3) return DDMC_ENOMEM;
  char *s = malloc(units * 3 + 1);
  if (!s) return DDMC_ENOMEM;
  size_t o = 0;
  for (size_t i = 0; i < units; i++) {
    uint32_t u = ddmc_host__get16(p + 2 * i);
    uint32_t cp = u;
    if (u >= 0xd800 && u <= 0xdbff && i + 1 < units) {
      uint32_t lo = ddmc_host__get16(p + 2 * (i + 1));
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
        i++;
      } else {
        cp = 0xfffd;
      }
    } else if (u >= 0xd800 && u <= 0xdfff) {
      cp = 0xfffd; /* lone high at the end, or a stray low surrogate */
    } else if (u == 0) {
      cp = 0xfffd; /* keep the C string whole */
    }
    o += put_utf8(s + o, cp);
  }
  s[o] = '\0';
  *out = s;
  return 0;
}

int ddmc_host_utf8_to_utf16be(const char *str, uint8_t **out, size_t *nbytes) {
  if (!str || !out || !nbytes) return DDMC_EINVAL;
  *out = NULL;
  *nbytes = 0;
  const uint8_t *s = (const uint8_t *)str;
  size_t len = strlen(str);
  /* Each input byte yields at most one unit, except 4-byte sequences which yield 2 for 4. */
  if (len > (SIZE_MAX - 2) / 2) return DDMC_ENOMEM;
  uint8_t *b = malloc(2 * len + 2);
  if (!b) return DDMC_ENOMEM;
  size_t o = 0, i = 0;
  while (i < len) {
    uint32_t c = s[i], cp = 0xfffd;
    size_t need = 0;
    uint32_t min = 0;
    if (c < 0x80) {
      cp = c;
    } else if ((c & 0xe0) == 0xc0) {
      need = 1, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      need = 2, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      need = 3, cp = c & 0x07, min = 0x10000;
    }
    size_t k = 1;
    if (need) {
      for (; k <= need; k++) {
        if (i + k >= len || (s[i + k] & 0xc0) != 0x80) break;
        cp = (cp << 6) | (s[i + k] & 0x3f);
      }
      /* Truncated, overlong, surrogate or out-of-range sequences: one U+FFFD per bad lead byte. */
      if (k <= need || cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        cp = 0xfffd;
        k = 1;
      }
    } else if (c >= 0x80) {
      cp = 0xfffd;
    }
    i += k;
    if (cp >= 0x10000) {
      uint32_t v = cp - 0x10000, hi = 0xd800 + (v >> 10), lo = 0xdc00 + (v & 0x3ff);
      b[o++] = (uint8_t)(hi >> 8), b[o++] = (uint8_t)hi;
      b[o++] = (uint8_t)(lo >> 8), b[o++] = (uint8_t)lo;
    } else {
      b[o++] = (uint8_t)(cp >> 8), b[o++] = (uint8_t)cp;
    }
  }
  *out = b;
  *nbytes = o;
  return 0;
}

/* [u4 units][UTF-16BE]. *out NULL when null_if_empty and units == 0 (STKL's "no file"). Returns
 * 0, DDMC_EPROTO (truncated: the cursor's err is set), DDMC_ENOMEM. */
static int rd_str_len(ddmc_host__rd *r, uint32_t units, char **out, int null_if_empty) {
  *out = NULL;
  if (r->err || units > ddmc_host__left(r) / 2) {
    r->err = 1;
    return DDMC_EPROTO;
  }
  const uint8_t *q = ddmc_host__take(r, (size_t)units * 2);
  if (units == 0 && null_if_empty) return 0;
  return ddmc_host_utf16be_to_utf8(q, units, out);
}
static int rd_str(ddmc_host__rd *r, char **out, int null_if_empty) {
  uint32_t units = ddmc_host__u32(r);
  if (r->err) {
    *out = NULL;
    return DDMC_EPROTO;
  }
  return rd_str_len(r, units, out, null_if_empty);
}

static void rd_init(ddmc_host__rd *r, const uint8_t *p, size_t n) {
  r->p = p;
  r->end = p + n;
  r->err = 0;
}

/* ---- HELO ------------------------------------------------------------------------------------ */

void ddmc_host_helo_free(ddmc_host_helo *x) {
  if (!x) return;
  free(x->vm_ident);
  free(x->app_name);
  free(x->abi);
  free(x->jvm_flags);
  free(x->pkg_name);
  for (size_t i = 0; i < x->n_features; i++) free(x->features[i]);
  free(x->features);
  memset(x, 0, sizeof *x);
}

int ddmc_host_helo_parse(const uint8_t *p, size_t n, ddmc_host_helo *out) {
  if (!out || (!p && n)) return DDMC_EINVAL;
  memset(out, 0, sizeof *out);
  ddmc_host__rd r;
  rd_init(&r, p, n);
  out->version = ddmc_host__u32(&r);
  out->pid = ddmc_host__u32(&r);
  uint32_t vm_len = ddmc_host__u32(&r);
  uint32_t app_len = ddmc_host__u32(&r);
  int rc = rd_str_len(&r, vm_len, &out->vm_ident, 0);
  if (rc == 0) rc = rd_str_len(&r, app_len, &out->app_name, 0);
  if (rc) goto fail;

  /* Optional tail, ddmlib style: each field only if bytes remain; a field cut short ends the
   * parse but keeps what came before (ddmlib catches BufferUnderflowException per field). */
  if (ddmc_host__left(&r) == 0) return 0;
  out->user_id = (int32_t)ddmc_host__u32(&r);
  if (r.err) goto truncated;
  out->present |= DDMC_HOST_HELO_USER_ID;

  if (ddmc_host__left(&r) == 0) return 0;
  rc = rd_str(&r, &out->abi, 0);
  if (rc == DDMC_ENOMEM) goto fail;
  if (rc) goto truncated;
  out->present |= DDMC_HOST_HELO_ABI;

  if (ddmc_host__left(&r) == 0) return 0;
  rc = rd_str(&r, &out->jvm_flags, 0);
  if (rc == DDMC_ENOMEM) goto fail;
  if (rc) goto truncated;
  out->present |= DDMC_HOST_HELO_JVM_FLAGS;

  if (ddmc_host__left(&r) == 0) return 0;
  out->native_debuggable = ddmc_host__u8(&r) == 1;
  out->present |= DDMC_HOST_HELO_NATIVE_DEBUGGABLE;

  if (ddmc_host__left(&r) == 0) return 0;
  rc = rd_str(&r, &out->pkg_name, 0);
  if (rc == DDMC_ENOMEM) goto fail;
  if (rc) goto truncated;
  out->present |= DDMC_HOST_HELO_PKG_NAME;

  if (ddmc_host__left(&r) == 0) return 0;
  out->stage = ddmc_host__u32(&r);
  if (r.err) goto truncated;
  out->present |= DDMC_HOST_HELO_STAGE;
  return 0;

truncated:
  out->truncated = 1;
  return 0;
fail:
  ddmc_host_helo_free(out);
  return rc ? rc : DDMC_EPROTO;
}

/* ---- FEAT ------------------------------------------------------------------------------------ */

void ddmc_host_feat_free(ddmc_host_feat *x) {
  if (!x) return;
  for (size_t i = 0; i < x->count; i++) free(x->names[i]);
  free(x->names);
  memset(x, 0, sizeof *x);
}

int ddmc_host_feat_parse(const uint8_t *p, size_t n, ddmc_host_feat *out) {
  if (!out || (!p && n)) return DDMC_EINVAL;
  memset(out, 0, sizeof *out);
  ddmc_host__rd r;
  rd_init(&r, p, n);
  uint32_t count = ddmc_host__u32(&r);
  if (r.err || count > ddmc_host__left(&r) / 4) return DDMC_EPROTO; /* each needs its u4 */
  if (count == 0) return 0;
  out->names = calloc(count, sizeof *out->names);
  if (!out->names) return DDMC_ENOMEM;
  for (uint32_t i = 0; i < count; i++) {
    int rc = rd_str(&r, &out->names[i], 0);
    if (rc) {
      out->count = i;
      ddmc_host_feat_free(out);
      return rc;
    }
  }
  out->count = count;
  return 0;
}

/* ---- APNM ------------------------------------------------------------------------------------ */

void ddmc_host_apnm_free(ddmc_host_apnm *x) {
  if (!x) return;
  free(x->name);
  free(x->pkg_name);
  memset(x, 0, sizeof *x);
}

int ddmc_host_apnm_parse(const uint8_t *p, size_t n, ddmc_host_apnm *out) {
  if (!out || (!p && n)) return DDMC_EINVAL;
  memset(out, 0, sizeof *out);
  ddmc_host__rd r;
  rd_init(&r, p, n);
  int rc = rd_str(&r, &out->name, 0);
  if (rc) return rc;
  if (ddmc_host__left(&r) == 0) return 0;
  out->user_id = (int32_t)ddmc_host__u32(&r);
  if (r.err) {
    out->user_id = 0;
    out->truncated = 1;
    return 0;
  }
  out->has_user_id = 1;
  if (ddmc_host__left(&r) == 0) return 0;
  rc = rd_str(&r, &out->pkg_name, 0);
  if (rc == DDMC_ENOMEM) {
    ddmc_host_apnm_free(out);
    return rc;
  }
  if (rc) out->truncated = 1;
  return 0;
}

/* ---- small fixed chunks --------------------------------------------------------------------- */

int ddmc_host_wait_parse(const uint8_t *p, size_t n, uint8_t *reason) {
  if (!reason || (!p && n)) return DDMC_EINVAL;
  *reason = 0;
  if (n < 1) return DDMC_EPROTO;
  *reason = p[0];
  return 0;
}

int ddmc_host_sess_parse(const uint8_t *p, size_t n, ddmc_host_sess *out) {
  if (!out || (!p && n)) return DDMC_EINVAL;
  memset(out, 0, sizeof *out);
  if (n < 21) return DDMC_EPROTO;
  out->version = ddmc_host__get32(p);
  if (out->version < 1) return DDMC_EPROTO;
  out->sessions = ddmc_host__get32(p + 4);
  out->max_sessions = ddmc_host__get32(p + 8);
  out->self = ddmc_host__get32(p + 12);
  out->seat = ddmc_host__get32(p + 16);
  out->debugger = p[20] & 1;
  out->confirmed = (p[20] >> 1) & 1;
  return 0;
}

static int parse_u32_only(const uint8_t *p, size_t n, uint32_t *v) {
  if (!v || (!p && n)) return DDMC_EINVAL;
  *v = 0;
  if (n < 4) return DDMC_EPROTO;
  *v = ddmc_host__get32(p);
  return 0;
}
int ddmc_host_thde_parse(const uint8_t *p, size_t n, uint32_t *thread_id) {
  return parse_u32_only(p, n, thread_id);
}
int ddmc_host_heapid_parse(const uint8_t *p, size_t n, uint32_t *heap_id) {
  return parse_u32_only(p, n, heap_id);
}

void ddmc_host_thname_free(ddmc_host_thname *x) {
  if (!x) return;
  free(x->name);
  memset(x, 0, sizeof *x);
}

int ddmc_host_thname_parse(const uint8_t *p, size_t n, ddmc_host_thname *out) {
  if (!out || (!p && n)) return DDMC_EINVAL;
  memset(out, 0, sizeof *out);
  ddmc_host__rd r;
  rd_init(&r, p, n);
  uint32_t id = ddmc_host__u32(&r);
  int rc = rd_str(&r, &out->name, 0);
  if (rc) return rc;
  out->thread_id = id;
  return 0;
}

void ddmc_host_fail_free(ddmc_host_fail *x) {
  if (!x) return;
  free(x->msg);
  memset(x, 0, sizeof *x);
}

int ddmc_host_fail_parse(const uint8_t *p, size_t n, ddmc_host_fail *out) {
  if (!out || (!p && n)) return DDMC_EINVAL;
  memset(out, 0, sizeof *out);
  ddmc_host__rd r;
  rd_init(&r, p, n);
  int32_t code = (int32_t)ddmc_host__u32(&r);
  int rc = rd_str(&r, &out->msg, 0);
  if (rc) return rc;
  out->code = code;
  return 0;
}

/* ---- THST ------------------------------------------------------------------------------------ */

void ddmc_host_thst_free(ddmc_host_thst *x) {
  if (!x) return;
  free(x->entries);
  memset(x, 0, sizeof *x);
}

int ddmc_host_thst_parse(const uint8_t *p, size_t n, ddmc_host_thst *out) {
  if (!out || (!p && n)) return DDMC_EINVAL;
  memset(out, 0, sizeof *out);
  if (n < 4) return DDMC_EPROTO;
  size_t hdr = p[0], bpe = p[1], count = ddmc_host__get16(p + 2);
  /* ddmlib reads the 17 bytes before the daemon flag unconditionally, so anything shorter cannot
   * be a THST; larger sizes are a newer VM appending fields: skip them. */
  if (hdr < 4 || bpe < 17) return DDMC_EPROTO;
  if (hdr > n || count > (n - hdr) / bpe) return DDMC_EPROTO;
  if (count == 0) return 0;
  out->entries = calloc(count, sizeof *out->entries);
  if (!out->entries) return DDMC_ENOMEM;
  for (size_t i = 0; i < count; i++) {
    const uint8_t *e = p + hdr + i * bpe;
    ddmc_host_thst_entry *t = &out->entries[i];
    t->thread_id = ddmc_host__get32(e);
    t->status = e[4];
    t->tid = ddmc_host__get32(e + 5);
    t->utime = ddmc_host__get32(e + 9);
    t->stime = ddmc_host__get32(e + 13);
    t->daemon = bpe >= 18 ? e[17] != 0 : -1;
  }
  out->count = count;
  return 0;
}

/* ---- STKL ------------------------------------------------------------------------------------ */

void ddmc_host_stkl_free(ddmc_host_stkl *x) {
  if (!x) return;
  for (size_t i = 0; i < x->count; i++) {
    free(x->frames[i].class_name);
    free(x->frames[i].method);
    free(x->frames[i].file);
  }
  free(x->frames);
  memset(x, 0, sizeof *x);
}

int ddmc_host_stkl_parse(const uint8_t *p, size_t n, ddmc_host_stkl *out) {
  if (!out || (!p && n)) return DDMC_EINVAL;
  memset(out, 0, sizeof *out);
  ddmc_host__rd r;
  rd_init(&r, p, n);
  uint32_t reserved = ddmc_host__u32(&r);
  uint32_t tid = ddmc_host__u32(&r);
  uint32_t count = ddmc_host__u32(&r);
  /* A frame is at least three empty strings and a line: 16 bytes. */
  if (r.err || count > ddmc_host__left(&r) / 16) return DDMC_EPROTO;
  out->reserved = reserved;
  out->thread_id = tid;
  if (count == 0) return 0;
  out->frames = calloc(count, sizeof *out->frames);
  if (!out->frames) return DDMC_ENOMEM;
  for (uint32_t i = 0; i < count; i++) {
    ddmc_host_frame *f = &out->frames[i];
    out->count = i + 1; /* so a failure frees this frame's strings too */
    int rc = rd_str(&r, &f->class_name, 0);
    if (!rc) rc = rd_str(&r, &f->method, 0);
    if (!rc) rc = rd_str(&r, &f->file, 1);
    if (!rc) {
      f->line = (int32_t)ddmc_host__u32(&r);
      if (r.err) rc = DDMC_EPROTO;
    }
    if (rc) {
      ddmc_host_stkl_free(out);
      return rc;
    }
  }
  return 0;
}

/* ---- HPIF ------------------------------------------------------------------------------------ */

void ddmc_host_hpif_free(ddmc_host_hpif *x) {
  if (!x) return;
  free(x->heaps);
  memset(x, 0, sizeof *x);
}

int ddmc_host_hpif_parse(const uint8_t *p, size_t n, ddmc_host_hpif *out) {
  if (!out || (!p && n)) return DDMC_EINVAL;
  memset(out, 0, sizeof *out);
  ddmc_host__rd r;
  rd_init(&r, p, n);
  uint32_t count = ddmc_host__u32(&r);
  if (r.err || count > ddmc_host__left(&r) / 29) return DDMC_EPROTO;
  if (count == 0) return 0;
  out->heaps = calloc(count, sizeof *out->heaps);
  if (!out->heaps) return DDMC_ENOMEM;
  for (uint32_t i = 0; i < count; i++) {
    ddmc_host_heap_info *hi = &out->heaps[i];
    hi->heap_id = ddmc_host__u32(&r);
    hi->timestamp_ms = ddmc_host__u64(&r);
    hi->reason = ddmc_host__u8(&r);
    hi->max_bytes = ddmc_host__u32(&r);
    hi->footprint = ddmc_host__u32(&r);
    hi->allocated_bytes = ddmc_host__u32(&r);
    hi->allocated_objects = ddmc_host__u32(&r);
  }
  /* count was checked against the bytes left, so the cursor cannot have run out. */
  out->count = count;
  return 0;
}
