/* SPDX-License-Identifier: Apache-2.0 */
/* A program built only against an installed libddmc (tests/package/test_install.py builds it with
 * pkg-config and with find_package): it embeds the library in a pretend VM, listens on
 * 127.0.0.1, then plays the monitor's side itself (JDWP handshake, a DDM HELO) and checks that
 * the answer names the VM. Prints one line "consumer: ..." and exits 0, or says what failed and
 * exits 1. Every wait is bounded. */
#include <ddmc/ddmc.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define VM_NAME "consumer-vm"

static int fail(const char *what, int rc) {
  fprintf(stderr, "consumer: %s failed (%d: %s)\n", what, rc, rc < 0 ? ddmc_strerror(rc) : "");
  return 1;
}

static int read_exact(int fd, void *p, size_t n) {
  for (size_t got = 0; got < n;) {
    ssize_t r = recv(fd, (char *)p + got, n - got, 0);
    if (r <= 0) return -1; /* closed, or the 5 s receive timeout */
    got += (size_t)r;
  }
  return 0;
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The monitor's side: handshake, then DDM HELO (JDWP command set 199, command 1); the reply's
 * vmIdent (UTF-16BE, ASCII here) goes to ident. */
static int helo(uint16_t port, char *ident, size_t cap) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  struct timeval tv = {5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc = -1;
  unsigned char hs[14], hdr[11], body[256];
  static const unsigned char req[] = {
      0, 0, 0, 23, 0, 0, 0, 1, 0, 199, 1, /* JDWP header: length 23, id 1, flags 0, 199/1 */
      'H', 'E', 'L', 'O', 0, 0, 0, 4,     /* chunk type and length */
      0, 0, 0, 1};                        /* the monitor's protocol version */
  if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) goto out;
  if (send(fd, "JDWP-Handshake", 14, MSG_NOSIGNAL) != 14 || read_exact(fd, hs, 14) != 0 ||
      memcmp(hs, "JDWP-Handshake", 14) != 0)
    goto out;
  if (send(fd, req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req) || read_exact(fd, hdr, 11) != 0) goto out;
  uint32_t len = be32(hdr);
  /* A reply (flags 0x80) to id 1 without error, holding a HELO chunk that fits here. */
  if (be32(hdr + 4) != 1 || hdr[8] != 0x80 || hdr[9] != 0 || hdr[10] != 0 || len < 11 + 24 ||
      len - 11 > sizeof(body) || read_exact(fd, body, len - 11) != 0 || memcmp(body, "HELO", 4) != 0)
    goto out;
  uint32_t units = be32(body + 16);
  if (units >= cap || 24 + 2 * (size_t)units > len - 11) goto out;
  for (uint32_t i = 0; i < units; i++) ident[i] = body[24 + 2 * i] ? '?' : (char)body[24 + 2 * i + 1];
  ident[units] = '\0';
  rc = 0;
out:
  close(fd);
  return rc;
}

int main(void) {
  /* The header this was compiled with and the library it runs with are the same release. */
  if (strcmp(ddmc_version_string(), DDMC_VERSION_STRING) != 0 || ddmc_version() != DDMC_VERSION_HEX) {
    fprintf(stderr, "consumer: header %s, library %s\n", DDMC_VERSION_STRING, ddmc_version_string());
    return 1;
  }
  ddmc_options o;
  ddmc_options_init(&o);
  char err[256];
  int rc = ddmc_options_parse(&o, "transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n", err, sizeof(err));
  if (rc != 0) return fprintf(stderr, "consumer: %s\n", err), 1;
  ddmc_vm *vm = NULL;
  if ((rc = ddmc_vm_new(&vm, &o, NULL, NULL, NULL)) != 0) return fail("ddmc_vm_new", rc);
  ddmc_vm_ident id = {.vm_name = VM_NAME, .abi = "test", .jvm_flags = ""};
  if ((rc = ddmc_vm_set_ident(vm, &id)) != 0) return fail("ddmc_vm_set_ident", rc);
  if ((rc = ddmc_vm_start(vm)) != 0) return fail("ddmc_vm_start", rc);
  uint16_t port = ddmc_vm_port(vm);
  char ident[64] = "";
  int ok = port != 0 && helo(port, ident, sizeof(ident)) == 0 && strcmp(ident, VM_NAME) == 0;
  ddmc_vm_stop(vm);
  ddmc_vm_free(vm);
  if (!ok) {
    fprintf(stderr, "consumer: HELO on 127.0.0.1:%u gave vmIdent '%s', expected '%s'\n", port, ident, VM_NAME);
    return 1;
  }
  printf("consumer: libddmc %s, HELO on 127.0.0.1:%u named the VM %s\n", ddmc_version_string(), port, ident);
  return 0;
}
