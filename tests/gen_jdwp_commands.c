/* SPDX-License-Identifier: Apache-2.0 */
/* Writes docs/jdwp-commands.md from the debugger's table of contents (src/debugger/table.c):
 * every command of every set, answered or not offered behind which capability.
 *
 *   gen_jdwp_commands            prints the document
 *   gen_jdwp_commands FILE       exits 1 (and says so) when FILE differs from it: the ctest check
 *   gen_jdwp_commands -w FILE    rewrites FILE */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debugger/dbg_int.h"

#define DOC_MAX ((size_t)1 << 16)

static char g_doc[DOC_MAX];
static size_t g_len;

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void
emit(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(g_doc + g_len, DOC_MAX - g_len, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= DOC_MAX - g_len) {
    fprintf(stderr, "gen_jdwp_commands: document too long\n");
    exit(2);
  }
  g_len += (size_t)k;
}

static void build(void) {
  emit(
      "# JDWP commands answered by libddmc\n\n"
      "Generated from `src/debugger/table.c` by `tests/gen_jdwp_commands.c` (the ctest `jdwp_commands_doc` fails "
      "when this file is stale; regenerate with\n`build/tests/gen_jdwp_commands -w docs/jdwp-commands.md`).\n\n"
      "Every command of every set a debugger sends is either *answered* (through the VM bridge: a VM without the "
      "op a command needs answers\nNOT_IMPLEMENTED and says no in the matching capability) or *not offered*: the "
      "capability named is answered false, so a debugger\ndoes not send it, and the command answers "
      "NOT_IMPLEMENTED. Event.Composite (64/100) goes the other way: the library sends it.\n");
  int answered = 0, not_offered = 0;
  for (const ddmc__dbg_cmdset *s = ddmc__dbg_sets(); s->name != NULL; s++) {
    emit("\n## %s (%d)\n\nAnswered in %s.\n\n", s->name, s->set, s->files);
    int any = 0;
    for (int c = 0; c < 32; c++) {
      const ddmc__dbg_cmd *e = ddmc__dbg_lookup(s->set, (uint8_t)c);
      if (e == NULL) continue;
      if (!any) emit("| command | name | answer |\n|---|---|---|\n");
      any = 1;
      if (e->not_offered_behind == NULL) {
        emit("| %d/%d | %s | answered |\n", s->set, c, e->name);
        answered++;
      } else {
        emit("| %d/%d | %s | not offered: `%s` is false |\n", s->set, c, e->name, e->not_offered_behind);
        not_offered++;
      }
    }
    if (!any) emit("The set has no commands.\n");
  }
  emit("\n%d answered, %d not offered.\n", answered, not_offered);
}

int main(int argc, char **argv) {
  build();
  const char *doc = g_doc;
  size_t n = g_len;
  if (argc == 1) {
    fwrite(doc, 1, n, stdout);
    return 0;
  }
  int write = argc == 3 && strcmp(argv[1], "-w") == 0;
  const char *path = argv[argc - 1];
  if (write) {
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(doc, 1, n, f) != n || fclose(f) != 0) {
      perror(path);
      return 2;
    }
    return 0;
  }
  static char old[DOC_MAX + 1];
  FILE *f = fopen(path, "rb");
  size_t m = f ? fread(old, 1, DOC_MAX, f) : 0;
  if (f) fclose(f);
  if (m != n || memcmp(old, doc, n) != 0) {
    fprintf(stderr, "%s is stale: regenerate with gen_jdwp_commands -w %s\n", path, path);
    return 1;
  }
  printf("%s is current\n", path);
  return 0;
}
