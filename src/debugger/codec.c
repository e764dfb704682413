/* SPDX-License-Identifier: Apache-2.0 */
/* Reading and writing the wire forms every command handler shares: IDs, values, locations and
 * strings (JDWP spec, "Detailed Command Information", common data types).
 *
 * methodID and fieldID are the VM's index in its class plus one, so 0 never names anything and
 * an ID is checked against the counts the class description holds before any op sees it. They
 * are only meaningful beside their referenceTypeID, which JDWP always sends with them. */
#include <string.h>

#include "debugger/dbg_int.h"

static int truncated(ddmc_reader *r) { return r->err ? DDMC_JDWP_INVALID_LENGTH : 0; }

int ddmc__dbg_rd_object(ddmc__dbg *d, ddmc_reader *r, ddmc_ref *out) {
  uint64_t id = ddmc_read_u64(r);
  *out = 0;
  if (r->err) return DDMC_JDWP_INVALID_LENGTH;
  return ddmc__dbg_object_of_id(d, id, out);
}

int ddmc__dbg_rd_class(ddmc__dbg *d, ddmc_reader *r, const ddmc__dbg_cls **out) {
  uint64_t id = ddmc_read_u64(r);
  *out = NULL;
  if (r->err) return DDMC_JDWP_INVALID_LENGTH;
  return ddmc__dbg_class_of_id(d, id, out);
}

int ddmc__dbg_rd_method(ddmc__dbg *d, ddmc_reader *r, const ddmc__dbg_cls *c, const ddmc__dbg_cls **decl,
                        uint32_t *out) {
  uint64_t mid = ddmc_read_u64(r);
  if (r->err) return DDMC_JDWP_INVALID_LENGTH;
  const ddmc__dbg_cls *k;
  int rc = ddmc__dbg_class_of_member_id(d, mid, 1, &k, out);
  if (rc != 0) return rc;
  /* c itself, or (for a call on an instance of c) a superclass or an interface (a default
   * method) that declares the method */
  if (c == NULL || (k != c && (decl == NULL || !ddmc__dbg_is_assignable(d, c->handle, k->handle))))
    return DDMC_JDWP_INVALID_METHODID;
  if (decl != NULL) *decl = k;
  return 0;
}

/* Field and method IDs name their declaring class (its ID's generation and slot) and the
 * member's index + 1, so a member is found from its ID alone: JDI names a field or method
 * together with a subclass of its declaring class. */
static uint64_t member_id(const ddmc__dbg_cls *c, uint32_t index) {
  uint64_t gen = (c->id >> 32) & 0x7ffff, slot1 = c->id & 0x1fffff;
  return gen << 45 | slot1 << 24 | ((uint64_t)index + 1);
}

uint64_t ddmc__dbg_field_id(const ddmc__dbg_cls *c, uint32_t index) { return member_id(c, index); }

uint64_t ddmc__dbg_method_id(const ddmc__dbg_cls *c, uint32_t index) { return member_id(c, index); }

int ddmc__dbg_rd_field(ddmc__dbg *d, ddmc_reader *r, const ddmc__dbg_cls *want, const ddmc__dbg_cls **decl,
                       uint32_t *out) {
  uint64_t fid = ddmc_read_u64(r);
  if (r->err) return DDMC_JDWP_INVALID_LENGTH;
  const ddmc__dbg_cls *c;
  int rc = ddmc__dbg_class_of_member_id(d, fid, 0, &c, out);
  if (rc != 0) return rc;
  if (want != NULL && !ddmc__dbg_is_subclass(d, want->handle, c->handle)) return DDMC_JDWP_INVALID_FIELDID;
  if (decl != NULL) *decl = c;
  return 0;
}

int ddmc__dbg_rd_thread(ddmc__dbg *d, ddmc_reader *r, uint32_t *thread) {
  uint64_t id = ddmc_read_u64(r);
  if (r->err) return DDMC_JDWP_INVALID_LENGTH;
  ddmc_ref o;
  int rc = ddmc__dbg_object_of_id(d, id, &o);
  if (rc != 0) return rc;
  if (o == 0) return DDMC_JDWP_INVALID_THREAD;
  return ddmc__dbg_thr_of_object(d, o, thread);
}

int ddmc__dbg_rd_frame(ddmc__dbg *d, ddmc_reader *r, uint32_t thread, int32_t *depth) {
  uint64_t id = ddmc_read_u64(r);
  if (r->err) return DDMC_JDWP_INVALID_LENGTH;
  int rc = ddmc__dbg_frame_check(d, thread, id, depth);
  if (rc != 0) return rc;
  int32_t n = 0;
  rc = DDMC__DBG_CALL(d, frame_count, thread, &n);
  if (rc != 0) return rc;
  return *depth < n ? 0 : DDMC_JDWP_INVALID_FRAMEID;
}

int ddmc__dbg_rd_location(ddmc__dbg *d, ddmc_reader *r, ddmc_location *out) {
  uint8_t tag = ddmc_read_u8(r);
  const ddmc__dbg_cls *c;
  int rc = ddmc__dbg_rd_class(d, r, &c);
  if (rc != 0) {
    ddmc_read_u64(r); /* the rest, so a bad class is not also a length error */
    ddmc_read_u64(r);
    return truncated(r) ? truncated(r) : rc;
  }
  uint32_t m;
  rc = ddmc__dbg_rd_method(d, r, c, NULL, &m);
  int64_t index = (int64_t)ddmc_read_u64(r);
  if (r->err) return DDMC_JDWP_INVALID_LENGTH;
  if (rc != 0) return rc;
  if (tag != DDMC_TYPE_CLASS && tag != DDMC_TYPE_INTERFACE && tag != DDMC_TYPE_ARRAY) return DDMC_JDWP_INVALID_TAG;
  out->cls = c->handle;
  out->method = m;
  out->index = index;
  return 0;
}

size_t ddmc__dbg_value_size(char tag) {
  switch (tag) {
    case 'Z':
    case 'B': return 1;
    case 'C':
    case 'S': return 2;
    case 'I':
    case 'F': return 4;
    case 'J':
    case 'D': return 8;
    case 'V': return 0;
    case 'L':
    case 's':
    case '[':
    case 't':
    case 'g':
    case 'c':
    case 'l': return 8;
    default: return 0;
  }
}

static int is_object_tag(char tag) {
  return tag == 'L' || tag == 's' || tag == '[' || tag == 't' || tag == 'g' || tag == 'c' || tag == 'l';
}

int ddmc__dbg_rd_value(ddmc__dbg *d, ddmc_reader *r, char tag, ddmc_value *out) {
  if (tag == 0) {
    tag = (char)ddmc_read_u8(r);
    if (r->err) return DDMC_JDWP_INVALID_LENGTH;
  }
  memset(out, 0, sizeof(*out));
  out->tag = tag;
  switch (tag) {
    case 'Z': out->u.i = ddmc_read_u8(r) != 0; break;
    case 'B': out->u.i = (int8_t)ddmc_read_u8(r); break;
    case 'C': out->u.i = ddmc_read_u16(r); break;
    case 'S': out->u.i = (int16_t)ddmc_read_u16(r); break;
    case 'I': out->u.i = (int32_t)ddmc_read_u32(r); break;
    case 'F': {
      uint32_t bits = ddmc_read_u32(r);
      memcpy(&out->u.f, &bits, 4);
      break;
    }
    case 'J': out->u.j = (int64_t)ddmc_read_u64(r); break;
    case 'D': {
      uint64_t bits = ddmc_read_u64(r);
      memcpy(&out->u.d, &bits, 8);
      break;
    }
    case 'V': break;
    default:
      if (!is_object_tag(tag)) return DDMC_JDWP_INVALID_TAG;
      out->tag = 'L';
      return ddmc__dbg_rd_object(d, r, &out->u.l);
  }
  return truncated(r);
}

int ddmc__dbg_rd_string(ddmc_reader *r, char *out, size_t cap) {
  uint32_t n = ddmc_read_u32(r);
  if (r->err || n > ddmc_reader_left(r)) {
    r->err = 1;
    return DDMC_JDWP_INVALID_LENGTH;
  }
  const uint8_t *p = ddmc_read_bytes(r, n);
  if (cap == 0 || n > cap - 1) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  memcpy(out, p, n);
  out[n] = '\0';
  return 0;
}

void ddmc__dbg_wr_string(ddmc_buf *b, const char *s) {
  size_t n = s ? strlen(s) : 0;
  ddmc_buf_put_u32(b, (uint32_t)n);
  if (n) ddmc_buf_put_bytes(b, s, n);
}

void ddmc__dbg_wr_id(ddmc_buf *b, uint64_t id) { ddmc_buf_put_u64(b, id); }

/* The specific tag of an object ('L' if its class does not say more). */
char ddmc__dbg_object_tag(ddmc__dbg *d, ddmc_ref o) {
  ddmc_class c = 0;
  const ddmc__dbg_cls *k;
  if (o == 0 || DDMC__DBG_CALL(d, object_class, o, &c) != 0 || ddmc__dbg_cls_get(d, c, &k) != 0) return 'L';
  return (char)k->object_tag;
}

int ddmc__dbg_wr_tagged_object(ddmc__dbg *d, ddmc_buf *b, ddmc_ref o) {
  uint64_t id = 0;
  int rc = ddmc__dbg_id_of_object(d, o, &id);
  if (rc != 0) return rc;
  ddmc_buf_put_u8(b, (uint8_t)ddmc__dbg_object_tag(d, o));
  ddmc__dbg_wr_id(b, id);
  return 0;
}

int ddmc__dbg_wr_value(ddmc__dbg *d, ddmc_buf *b, const ddmc_value *v, int tagged) {
  char tag = v->tag;
  if (is_object_tag(tag)) {
    if (tagged) return ddmc__dbg_wr_tagged_object(d, b, v->u.l);
    uint64_t id = 0;
    int rc = ddmc__dbg_id_of_object(d, v->u.l, &id);
    if (rc == 0) ddmc__dbg_wr_id(b, id);
    return rc;
  }
  if (tagged) ddmc_buf_put_u8(b, (uint8_t)tag);
  switch (tag) {
    case 'Z': ddmc_buf_put_u8(b, v->u.i != 0); break;
    case 'B': ddmc_buf_put_u8(b, (uint8_t)v->u.i); break;
    case 'C':
    case 'S': ddmc_buf_put_u16(b, (uint16_t)v->u.i); break;
    case 'I': ddmc_buf_put_u32(b, (uint32_t)v->u.i); break;
    case 'F': {
      uint32_t bits;
      memcpy(&bits, &v->u.f, 4);
      ddmc_buf_put_u32(b, bits);
      break;
    }
    case 'J': ddmc_buf_put_u64(b, (uint64_t)v->u.j); break;
    case 'D': {
      uint64_t bits;
      memcpy(&bits, &v->u.d, 8);
      ddmc_buf_put_u64(b, bits);
      break;
    }
    case 'V': break;
    default: return DDMC_JDWP_INTERNAL; /* the VM gave a value with no JDWP tag */
  }
  return 0;
}

int ddmc__dbg_wr_location(ddmc__dbg *d, ddmc_buf *b, const ddmc_location *loc) {
  const ddmc__dbg_cls *c;
  int rc = ddmc__dbg_cls_get(d, loc->cls, &c);
  if (rc != 0) return rc;
  ddmc_buf_put_u8(b, c->type_tag);
  ddmc__dbg_wr_id(b, c->id);
  ddmc__dbg_wr_id(b, ddmc__dbg_method_id(c, loc->method));
  ddmc_buf_put_u64(b, (uint64_t)loc->index);
  return 0;
}

char ddmc__dbg_sig_tag(const char *sig) {
  if (sig == NULL || sig[0] == '\0') return 'V';
  return sig[0] == '[' ? 'L' : sig[0];
}

int ddmc__dbg_field(ddmc__dbg *d, const ddmc__dbg_cls *c, uint32_t field, ddmc_field_info *out) {
  memset(out, 0, sizeof(*out));
  if (field >= c->nfields) return DDMC_JDWP_INVALID_FIELDID;
  int rc = DDMC__DBG_CALL(d, field_info, c->handle, field, out);
  if (rc == 0 && (out->name == NULL || out->signature == NULL || out->signature[0] == '\0'))
    rc = DDMC_JDWP_INVALID_FIELDID;
  return rc;
}

int ddmc__dbg_rd_count(ddmc_reader *r, size_t min_each, uint32_t *out) {
  uint32_t n = ddmc_read_u32(r);
  if (r->err || (min_each > 0 && n > ddmc_reader_left(r) / min_each)) {
    r->err = 1;
    return DDMC_JDWP_INVALID_LENGTH;
  }
  *out = n;
  return 0;
}

int ddmc__dbg_not_offered(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  (void)d;
  (void)out;
  ddmc_read_bytes(in, ddmc_reader_left(in));
  return DDMC_JDWP_NOT_IMPLEMENTED;
}
