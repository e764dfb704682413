/* SPDX-License-Identifier: Apache-2.0 */
/* Reaching a VM through a local adb server, as ddmlib does: the adb host protocol's smart socket.
 * Each request is [4 hex digits: length][request]; the server answers "OKAY", or "FAIL" followed
 * by [4 hex digits][message]. After host:transport:<serial> (or host:transport-any) and then
 * jdwp:<pid> are both OKAYed, the same TCP connection carries the VM's JDWP stream. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "ddmc_host.h"

static long long ms_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads exactly n bytes by the deadline. */
static int read_full(int fd, char *p, size_t n, long long deadline) {
  size_t got = 0;
  while (got < n) {
    long long left = deadline - ms_now();
    if (left <= 0) return DDMC_ETIMEDOUT;
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int rc = poll(&pfd, 1, (int)left);
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return rc == 0 ? DDMC_ETIMEDOUT : DDMC_EIO;
    ssize_t r = recv(fd, p + got, n - got, MSG_DONTWAIT);
    if (r == 0) return DDMC_ECLOSED;
    if (r < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return DDMC_ECLOSED;
    }
    got += (size_t)r;
  }
  return 0;
}

int ddmc_host_adb_hexlen(const char *s) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    unsigned char c = (unsigned char)s[i];
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return -1;
    v = v << 4 | d;
  }
  return v;
}

int ddmc_host_adb_send(ddmc_host *h, const char *req) {
  char buf[300];
  size_t n = strlen(req);
  if (n > 255) return DDMC_EINVAL;
  snprintf(buf, sizeof(buf), "%04zx%s", n, req);
  return ddmc_host_send_raw(h, buf, 4 + n);
}

/* Sends one request and reads the server's verdict. On FAIL, the message goes to err. */
static int adb_request(ddmc_host *h, const char *req, long long deadline, char *err, size_t errlen) {
  int rc = ddmc_host_adb_send(h, req);
  if (rc != 0) return rc;
  char status[4];
  if ((rc = read_full(ddmc_host_fd(h), status, 4, deadline)) != 0) return rc;
  if (memcmp(status, "OKAY", 4) == 0) return 0;
  if (memcmp(status, "FAIL", 4) != 0) return DDMC_EPROTO; /* not an adb server */
  char hex[4];
  if ((rc = read_full(ddmc_host_fd(h), hex, 4, deadline)) != 0) return rc;
  int len = ddmc_host_adb_hexlen(hex);
  if (len < 0) return DDMC_EPROTO;
  char msg[256];
  size_t take = (size_t)len < sizeof(msg) - 1 ? (size_t)len : sizeof(msg) - 1;
  if ((rc = read_full(ddmc_host_fd(h), msg, take, deadline)) != 0) return rc;
  msg[take] = '\0';
  if (err && errlen) snprintf(err, errlen, "%s: %s", req, msg);
  return DDMC_ENOENT;
}

int ddmc_host_adb_request(ddmc_host *h, const char *req, int timeout_ms, char *err, size_t errlen) {
  if (h == NULL || req == NULL) return DDMC_EINVAL;
  if (err && errlen) err[0] = '\0';
  return adb_request(h, req, ms_now() + (timeout_ms > 0 ? timeout_ms : 5000), err, errlen);
}

int ddmc_host_connect_adb(ddmc_host **out, const char *adb_host, uint16_t adb_port, const char *serial, uint32_t pid,
                          int timeout_ms, char *err, size_t errlen) {
  if (out == NULL) return DDMC_EINVAL;
  *out = NULL;
  if (err && errlen) err[0] = '\0';
  long long deadline = ms_now() + (timeout_ms > 0 ? timeout_ms : 5000);
  ddmc_host *h = NULL;
  int rc = ddmc_host_connect_tcp(&h, adb_host ? adb_host : "127.0.0.1", adb_port, timeout_ms);
  if (rc != 0) return rc;
  char req[200];
  if (serial && *serial)
    snprintf(req, sizeof(req), "host:transport:%s", serial);
  else
    snprintf(req, sizeof(req), "host:transport-any");
  rc = adb_request(h, req, deadline, err, errlen);
  if (rc == 0) {
    snprintf(req, sizeof(req), "jdwp:%u", (unsigned)pid);
    rc = adb_request(h, req, deadline, err, errlen);
  }
  if (rc != 0) {
    ddmc_host_free(h);
    return rc;
  }
  *out = h;
  return 0;
}
