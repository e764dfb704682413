/* SPDX-License-Identifier: Apache-2.0 */
/* ObjectReference (9), StringReference (10), ArrayReference (13), ClassLoaderReference (14).
 *
 * Every object comes through the registry (a stale or forged ID is INVALID_OBJECT before the VM
 * sees it); fields are checked against the object's class, array ranges against the length, so
 * the VM's ops only ever get values they can use. Arrays move in slices of DDMC__SLICE elements:
 * a request for a huge range costs one slice of memory, and the reply's own cap bounds the rest. */
#include <string.h>

#include "debugger/dbg_int.h"

#define DDMC__SLICE 1024

static int object_class(ddmc__dbg *d, ddmc_ref o, const ddmc__dbg_cls **c) {
  ddmc_class k = 0;
  int rc = DDMC__DBG_CALL(d, object_class, o, &k);
  if (rc != 0) return rc == DDMC_JDWP_INVALID_CLASS ? DDMC_JDWP_INVALID_OBJECT : rc;
  return ddmc__dbg_cls_get(d, k, c);
}

/* A non-null object and its class. */
static int rd_object(ddmc__dbg *d, ddmc_reader *in, ddmc_ref *o, const ddmc__dbg_cls **c) {
  int rc = ddmc__dbg_rd_object(d, in, o);
  if (rc != 0) return rc;
  if (*o == 0) return DDMC_JDWP_INVALID_OBJECT;
  return object_class(d, *o, c);
}

static int or_reference_type(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc_ref o;
  const ddmc__dbg_cls *c;
  int rc = rd_object(d, in, &o, &c);
  if (rc != 0) return rc;
  ddmc_buf_put_u8(out, c->type_tag);
  ddmc__dbg_wr_id(out, c->id);
  return 0;
}

static int or_get_values(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc_ref o;
  const ddmc__dbg_cls *c;
  int rc = rd_object(d, in, &o, &c);
  if (rc != 0) {
    ddmc_read_bytes(in, ddmc_reader_left(in));
    return rc;
  }
  return ddmc__dbg_get_fields(d, in, out, c, o);
}

static int or_set_values(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc_ref o;
  const ddmc__dbg_cls *c;
  int rc = rd_object(d, in, &o, &c);
  if (rc != 0) {
    ddmc_read_bytes(in, ddmc_reader_left(in));
    return rc;
  }
  return ddmc__dbg_set_fields(d, in, c, o);
}

static int or_disable_collection(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint64_t id = ddmc_read_u64(in);
  int rc = ddmc__dbg_rd_end(in);
  return rc != 0 ? rc : ddmc__dbg_id_disable_collection(d, id);
}

static int or_enable_collection(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint64_t id = ddmc_read_u64(in);
  int rc = ddmc__dbg_rd_end(in);
  return rc != 0 ? rc : ddmc__dbg_id_enable_collection(d, id);
}

static int or_is_collected(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint64_t id = ddmc_read_u64(in);
  int rc = ddmc__dbg_rd_end(in);
  int collected = 1;
  if (rc == 0) rc = ddmc__dbg_id_is_collected(d, id, &collected);
  if (rc == 0) ddmc_buf_put_u8(out, (uint8_t)collected);
  return rc;
}

/* ---- StringReference */

static int sr_value(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc_ref o;
  const ddmc__dbg_cls *c;
  int rc = rd_object(d, in, &o, &c);
  if (rc != 0) return rc;
  if (c->object_tag != 's') return DDMC_JDWP_INVALID_STRING;
  size_t at = ddmc__dbg_count_begin(out);
  if ((rc = DDMC__DBG_CALL(d, string_value, o, out)) != 0) return rc;
  size_t n = ddmc_buf_len(out) - at - 4;
  if (n > UINT32_MAX) return DDMC_JDWP_INTERNAL;
  ddmc__dbg_count_end(out, at, (uint32_t)n);
  return ddmc__dbg_reply_rc(out, 0);
}

/* ---- ArrayReference */

static int rd_array(ddmc__dbg *d, ddmc_reader *in, ddmc_ref *o, const ddmc__dbg_cls **c, int32_t *len) {
  int rc = rd_object(d, in, o, c);
  if (rc != 0) return rc;
  if ((*c)->object_tag != '[' || (*c)->signature[0] != '[') return DDMC_JDWP_INVALID_ARRAY;
  *len = 0;
  if ((rc = DDMC__DBG_CALL(d, array_length, *o, len)) != 0) return rc;
  return *len >= 0 ? 0 : DDMC_JDWP_INTERNAL;
}

static int ar_length(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc_ref o;
  const ddmc__dbg_cls *c;
  int32_t len;
  int rc = rd_array(d, in, &o, &c, &len);
  if (rc == 0) ddmc_buf_put_u32(out, (uint32_t)len);
  return rc;
}

static int rd_range(ddmc_reader *in, int32_t len, int32_t *first, int32_t *n) {
  *first = (int32_t)ddmc_read_u32(in);
  *n = (int32_t)ddmc_read_u32(in);
  if (in->err) return DDMC_JDWP_INVALID_LENGTH;
  if (*first < 0 || *n < 0 || *first > len || *n > len - *first) return DDMC_JDWP_INVALID_INDEX;
  return 0;
}

static int ar_get_values(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc_ref o;
  const ddmc__dbg_cls *c;
  int32_t len, first, n;
  int rc = rd_array(d, in, &o, &c, &len);
  if (rc != 0) {
    ddmc_read_bytes(in, ddmc_reader_left(in));
    return rc;
  }
  if ((rc = rd_range(in, len, &first, &n)) != 0) return rc;
  char etag = c->signature[1];
  int objects = etag == 'L' || etag == '[';
  ddmc_buf_put_u8(out, (uint8_t)etag);
  ddmc_buf_put_u32(out, (uint32_t)n);
  if (n > 0 && !DDMC__DBG_HAS(d, array_get)) return DDMC_JDWP_NOT_IMPLEMENTED;
  ddmc_value slice[DDMC__SLICE];
  for (int32_t done = 0; done < n && rc == 0;) {
    int32_t k = n - done < DDMC__SLICE ? n - done : DDMC__SLICE;
    memset(slice, 0, (size_t)k * sizeof(slice[0]));
    if ((rc = ddmc__dbg_bridge(d)->array_get(ddmc__dbg_vm_data(d), o, first + done, k, slice)) != 0) break;
    for (int32_t i = 0; i < k && rc == 0; i++) {
      if (objects)
        slice[i].tag = 'L';
      else if (slice[i].tag != etag)
        slice[i].tag = etag;
      rc = ddmc__dbg_wr_value(d, out, &slice[i], objects);
    }
    if (rc == 0 && ddmc_buf_error(out)) rc = DDMC_JDWP_OUT_OF_MEMORY;
    done += k;
  }
  return ddmc__dbg_reply_rc(out, rc);
}

static int ar_set_values(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc_ref o;
  const ddmc__dbg_cls *c;
  int32_t len, first, n;
  int rc = rd_array(d, in, &o, &c, &len);
  if (rc != 0) {
    ddmc_read_bytes(in, ddmc_reader_left(in));
    return rc;
  }
  if ((rc = rd_range(in, len, &first, &n)) != 0) return rc;
  char etag = ddmc__dbg_sig_tag(c->signature + 1);
  size_t each = ddmc__dbg_value_size(etag);
  if (each == 0 || (size_t)n > ddmc_reader_left(in) / each) {
    in->err = 1;
    return DDMC_JDWP_INVALID_LENGTH;
  }
  if (n > 0 && !DDMC__DBG_HAS(d, array_set)) return DDMC_JDWP_NOT_IMPLEMENTED;
  ddmc_value slice[DDMC__SLICE];
  ddmc_reader body = *in; /* two passes: nothing is stored unless every value is good */
  for (int apply = 0; apply < 2 && rc == 0; apply++) {
    *in = body;
    for (int32_t done = 0; done < n && rc == 0;) {
      int32_t k = n - done < DDMC__SLICE ? n - done : DDMC__SLICE;
      for (int32_t i = 0; i < k && rc == 0; i++) rc = ddmc__dbg_rd_value(d, in, etag, &slice[i]);
      if (rc == 0 && apply) rc = ddmc__dbg_bridge(d)->array_set(ddmc__dbg_vm_data(d), o, first + done, k, slice);
      done += k;
    }
    if (rc == 0) rc = ddmc__dbg_rd_end(in);
  }
  return rc;
}

/* ---- ClassLoaderReference */

typedef struct visible {
  ddmc__dbg *d;
  ddmc_buf *out;
  ddmc_ref loader;
  uint32_t n;
} visible;

static int put_visible(void *arg, ddmc_class k) {
  visible *v = arg;
  const ddmc__dbg_cls *c;
  ddmc_class_info info;
  memset(&info, 0, sizeof(info));
  if (ddmc__dbg_cls_get(v->d, k, &c) != 0 || DDMC__DBG_CALL(v->d, class_info, k, &info) != 0) return 0;
  /* The boot loader's classes are visible from every loader (delegation). */
  if (info.loader != 0 && info.loader != v->loader) return 0;
  ddmc_buf_put_u8(v->out, c->type_tag);
  ddmc__dbg_wr_id(v->out, c->id);
  v->n++;
  return ddmc_buf_error(v->out) != 0;
}

/* The null loader is the boot loader, as JDWP writes it everywhere (ReferenceType.ClassLoader)
 * and as libjdwp takes it here: the boot loader's classes. */
static int clr_visible_classes(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc_ref o;
  const ddmc__dbg_cls *c;
  int rc = ddmc__dbg_rd_object(d, in, &o);
  if (rc == 0 && o != 0) rc = object_class(d, o, &c);
  if (rc != 0) return rc;
  if (o != 0 && c->object_tag != 'l') return DDMC_JDWP_INVALID_CLASS_LOADER;
  visible v = {d, out, o, 0};
  size_t at = ddmc__dbg_count_begin(out);
  if ((rc = DDMC__DBG_CALL(d, for_each_class, put_visible, &v)) != 0) return rc;
  ddmc__dbg_count_end(out, at, v.n);
  return ddmc__dbg_reply_rc(out, 0);
}

const ddmc__dbg_cmd ddmc__dbg_cmds_object[] = {
    {9, 1, or_reference_type, "ObjectReference.ReferenceType", NULL},
    {9, 2, or_get_values, "ObjectReference.GetValues", NULL},
    {9, 3, or_set_values, "ObjectReference.SetValues", NULL},
    {9, 7, or_disable_collection, "ObjectReference.DisableCollection", NULL},
    {9, 8, or_enable_collection, "ObjectReference.EnableCollection", NULL},
    {9, 9, or_is_collected, "ObjectReference.IsCollected", NULL},
    {10, 1, sr_value, "StringReference.Value", NULL},
    {13, 1, ar_length, "ArrayReference.Length", NULL},
    {13, 2, ar_get_values, "ArrayReference.GetValues", NULL},
    {13, 3, ar_set_values, "ArrayReference.SetValues", NULL},
    {14, 1, clr_visible_classes, "ClassLoaderReference.VisibleClasses", NULL},
    {0, 0, NULL, NULL, NULL},
};
