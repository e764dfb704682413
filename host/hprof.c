/* SPDX-License-Identifier: Apache-2.0 */
/* hprof on the host side (ddmc_host.h): a census of an Android "JAVA PROFILE 1.0.3" dump and its
 * conversion to the standard 1.0.2 that MAT and VisualVM open, the same bytes hprof-conv writes
 * (docs/protocol/profiling.md §6.4): HEAP DUMP INFO dropped, Android's roots retagged ROOT UNKNOWN (JNI
 * MONITOR shortened to its id), each segment's length patched. Unlike hprof-conv it refuses
 * 0xC3 (which hprof-conv turns into an unparsable record) and anything cut short, rather than
 * writing a broken file. */
#include <string.h>

#include "ddmc_host.h"

#define ID 4u /* Android's id size: the header's field is not read, as hprof-conv does not */

static uint32_t be32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static uint16_t be16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static void put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* Value bytes of a basic type; 0 for an unknown type. */
static size_t type_size(uint8_t t) {
  switch (t) {
    case 2: return ID;
    case 4: case 8: return 1;
    case 5: case 9: return 2;
    case 6: case 10: return 4;
    case 7: case 11: return 8;
    default: return 0;
  }
}

/* The length of the sub-record at p (tag included) within n bytes, or 0 if malformed. */
static size_t sub_len(const uint8_t *p, size_t n, ddmc_host_hprof_info *info) {
  uint8_t tag = p[0];
  size_t need;
  switch (tag) {
    case 0xFF: case 0x05: case 0x07: case 0x89: case 0x8A: case 0x8B: case 0x8C: case 0x8D: case 0x90:
      need = 1 + ID; info->roots++; break;
    case 0x01: need = 1 + 2 * ID; info->roots++; break;
    case 0x02: case 0x03: case 0x08: case 0x8E: need = 1 + ID + 8; info->roots++; break;
    case 0x04: case 0x06: need = 1 + ID + 4; info->roots++; break;
    case 0xFE: need = 1 + 4 + ID; info->heap_infos++; break;
    case 0x21:
      if (n < 1 + 3 * ID + 4) return 0;
      need = 1 + 3 * ID + 4 + (size_t)be32(p + 1 + 3 * ID);
      info->instances++;
      break;
    case 0x22:
      if (n < 1 + 2 * ID + 4 + ID) return 0;
      need = 1 + 2 * ID + 4 + ID + (size_t)be32(p + 1 + 2 * ID) * ID;
      info->object_arrays++;
      break;
    case 0x23: {
      if (n < 1 + 2 * ID + 5) return 0;
      size_t w = type_size(p[1 + 2 * ID + 4]);
      if (w == 0 || p[1 + 2 * ID + 4] == 2) return 0;
      need = 1 + 2 * ID + 5 + (size_t)be32(p + 1 + 2 * ID) * w;
      info->primitive_arrays++;
      break;
    }
    case 0x20: {
      size_t at = 1 + 7 * ID + 4 + 4; /* id, serial, super, loader, signers, domain, 2 reserved, size */
      if (n < at + 2) return 0;
      uint16_t k = be16(p + at);
      at += 2;
      for (uint16_t i = 0; i < k; i++) { /* constants: u2 index, u1 type, value */
        if (n < at + 3 || type_size(p[at + 2]) == 0) return 0;
        at += 3 + type_size(p[at + 2]);
      }
      if (n < at + 2) return 0;
      k = be16(p + at);
      at += 2;
      for (uint16_t i = 0; i < k; i++) { /* statics: id name, u1 type, value */
        if (n < at + ID + 1 || type_size(p[at + ID]) == 0) return 0;
        at += ID + 1 + type_size(p[at + ID]);
      }
      if (n < at + 2) return 0;
      k = be16(p + at);
      at += 2;
      for (uint16_t i = 0; i < k; i++) { /* instance fields: id name, u1 type */
        if (n < at + ID + 1 || type_size(p[at + ID]) == 0) return 0;
        at += ID + 1;
      }
      need = at;
      info->classes++;
      break;
    }
    default: return 0; /* 0xC3 and anything unknown */
  }
  return need <= n ? need : 0;
}

/* Walks the file; with out, writes the 1.0.2 form there (never longer than the input); with
 * visit, shows it each record and sub-record. */
static int walk(const uint8_t *p, size_t n, ddmc_host_hprof_info *info, uint8_t *out, size_t *out_len,
                ddmc_host_hprof_visit visit, void *ud) {
  static const char magic[] = "JAVA PROFILE 1.0.3", standard[] = "JAVA PROFILE 1.0.2";
  memset(info, 0, sizeof(*info));
  if (n < sizeof(magic) + 12) return DDMC_EPROTO;
  /* A 1.0.2 file (hprof-conv's output) may be scanned, not converted again (hprof-conv refuses
   * it too); Android's own sub-records are errors in it. */
  int android = memcmp(p, magic, sizeof(magic)) == 0;
  if (!android && (out != NULL || memcmp(p, standard, sizeof(standard)) != 0)) return DDMC_EPROTO;
  info->android = android;
  info->id_size = be32(p + sizeof(magic));
  info->timestamp_ms = (uint64_t)be32(p + sizeof(magic) + 4) << 32 | be32(p + sizeof(magic) + 8);
  size_t at = sizeof(magic) + 12, o = at;
  if (out) {
    memmove(out, p, at);
    out[sizeof(magic) - 2] = '2';
  }
  int ended = 0;
  while (at < n) {
    if (n - at < 9 || ended) return DDMC_EPROTO;
    uint8_t tag = p[at];
    size_t len = be32(p + at + 5);
    if (len > n - at - 9) return DDMC_EPROTO;
    const uint8_t *body = p + at + 9;
    if (visit) visit(ud, 0, tag, body, len);
    if (tag != 0x0C && tag != 0x1C) {
      if (tag == 0x01) info->strings++;
      else if (tag == 0x02) info->load_classes++;
      else if (tag == 0x2C) ended = 1;
      if (out) memmove(out + o, p + at, 9 + len);
      o += 9 + len;
      at += 9 + len;
      continue;
    }
    info->segments++;
    size_t head = o;
    if (out) memmove(out + o, p + at, 9);
    o += 9;
    for (size_t s = 0; s < len;) {
      size_t k = sub_len(body + s, len - s, info);
      uint8_t t = body[s];
      if (k == 0 || (!android && (t == 0xFE || (t >= 0x89 && t <= 0x90)))) return DDMC_EPROTO;
      if (visit) visit(ud, 1, t, body + s + 1, k - 1);
      if (t == 0xFE) {
        /* dropped */
      } else if (t >= 0x89 && t <= 0x90) { /* Android's roots: ROOT UNKNOWN with the object id */
        if (out) {
          out[o] = 0xFF;
          memmove(out + o + 1, body + s + 1, ID);
        }
        o += 1 + ID;
      } else {
        if (out) memmove(out + o, body + s, k);
        o += k;
      }
      s += k;
    }
    if (out) put32(out + head + 5, (uint32_t)(o - head - 9));
    at += 9 + len;
  }
  if (!ended) return DDMC_EPROTO;
  if (out_len) *out_len = o;
  return 0;
}

int ddmc_host_hprof_scan(const uint8_t *p, size_t n, ddmc_host_hprof_info *info) {
  if (p == NULL || info == NULL) return DDMC_EINVAL;
  return walk(p, n, info, NULL, NULL, NULL, NULL);
}

int ddmc_host_hprof_walk(const uint8_t *p, size_t n, ddmc_host_hprof_visit visit, void *ud) {
  ddmc_host_hprof_info info;
  if (p == NULL || visit == NULL) return DDMC_EINVAL;
  return walk(p, n, &info, NULL, NULL, visit, ud);
}

int ddmc_host_hprof_to_standard(const uint8_t *p, size_t n, uint8_t *out, size_t *out_len) {
  ddmc_host_hprof_info info;
  if (p == NULL || out == NULL || out_len == NULL) return DDMC_EINVAL;
  return walk(p, n, &info, out, out_len, NULL, NULL);
}
