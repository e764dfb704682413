/* SPDX-License-Identifier: Apache-2.0 */
/* The export writers (tools/export.h) on traces made here, for the rules real VMs rarely show:
 * an exit that matches nothing, an unwinding that closes three frames at once, a frame still open
 * at the end, a method missing from the key section, each clock, a clock the file lacks, a
 * stream that cannot be written; and the timeline's slices from THST snapshots. The files the
 * consumers read are tested by exports.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

static int failures;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
      failures++;                                          \
    }                                                      \
  } while (0)

/* What a writer wrote, as a string (malloc'd), and its return code in *rc. */
static char *capture(int (*fn)(FILE *, void *), void *arg, int *rc) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (f == NULL) abort();
  *rc = fn(f, arg);
  fclose(f);
  /* The JSON writer puts a space after a key's colon; the expectations below have none. */
  size_t k = 0;
  for (size_t i = 0; buf && buf[i]; i++)
    if (!(buf[i] == ' ' && k >= 2 && buf[k - 1] == ':' && buf[k - 2] == '"')) buf[k++] = buf[i];
  if (buf) buf[k] = 0;
  return buf;
}

static ddmc_host_trace_thread threads[] = {{1, "main"}, {2, "worker"}};
static ddmc_host_trace_method methods[] = {{0x10, "A", "a", "()V", "A.java", 3},
                                           {0x20, "A", "b", "()V", "A.java", 7},
                                           {0x30, "A;x", "c", "()V", NULL, -1}};
/* main: an exit of something entered before the trace; a, b, c entered; an unroll of a (an
 * exception through c and b); b entered and never left. worker: a method the key section lacks.
 * Times: (thread CPU, wall). */
static ddmc_host_trace_rec recs[] = {
    {1, 0x40, 1, 0, 0},   {1, 0x10, 0, 5, 10},   {1, 0x20, 0, 10, 30}, {1, 0x30, 0, 20, 60},
    {2, 0x50, 0, 0, 50},  {1, 0x10, 2, 30, 100}, {1, 0x20, 0, 35, 110}, {2, 0x50, 1, 3, 57},
};

static ddmc_host_trace make_trace(void) {
  ddmc_host_trace t;
  memset(&t, 0, sizeof t);
  t.version = 3;
  strcpy(t.clock, "dual");
  t.data_version = 3;
  t.rec_size = 14;
  t.threads = threads;
  t.nthreads = 2;
  t.methods = methods;
  t.nmethods = 3;
  t.recs = recs;
  t.nrecs = sizeof recs / sizeof recs[0];
  return t;
}

typedef struct targ {
  const ddmc_host_trace *t;
  export_clock clock;
} targ;

static int do_collapsed(FILE *f, void *a) { return export_collapsed(f, ((targ *)a)->t, ((targ *)a)->clock); }
static int do_speedscope(FILE *f, void *a) { return export_speedscope(f, ((targ *)a)->t, ((targ *)a)->clock, "x"); }
static int do_pprof(FILE *f, void *a) { return export_pprof_trace(f, ((targ *)a)->t, ((targ *)a)->clock); }

/* The lines of s sorted, joined by '|': the order of lines is not part of the format. */
static char *sorted_lines(const char *s) {
  char *copy = strdup(s), *lines[64], *save = NULL;
  size_t n = 0;
  for (char *l = strtok_r(copy, "\n", &save); l && n < 64; l = strtok_r(NULL, "\n", &save)) lines[n++] = l;
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
      char *x = lines[j];
      lines[j] = lines[j - 1];
      lines[j - 1] = x;
    }
  char *out = calloc(1, strlen(s) + 2);
  for (size_t i = 0; i < n; i++) {
    strcat(out, lines[i]);
    if (i + 1 < n) strcat(out, "|");
  }
  free(copy);
  return out;
}

static void test_collapsed(void) {
  ddmc_host_trace t = make_trace();
  int rc;
  targ a = {&t, EXPORT_CLOCK_WALL};
  char *s = capture(do_collapsed, &a, &rc), *got = sorted_lines(s);
  CHECK(rc == 0, "collapsed wall: rc %d", rc);
  const char *want = "main 20|main;A.a 20|main;A.a;A.b 30|main;A.a;A.b;A:x.c 40|worker;(unknown 0x50) 7";
  CHECK(strcmp(got, want) == 0, "collapsed wall:\n got  %s\n want %s", got, want);
  free(s);
  free(got);
  a.clock = EXPORT_CLOCK_CPU;
  s = capture(do_collapsed, &a, &rc);
  got = sorted_lines(s);
  want = "main 10|main;A.a 5|main;A.a;A.b 10|main;A.a;A.b;A:x.c 10|worker;(unknown 0x50) 3";
  CHECK(rc == 0 && strcmp(got, want) == 0, "collapsed cpu (rc %d):\n got  %s\n want %s", rc, got, want);
  free(s);
  free(got);
  a.clock = EXPORT_CLOCK_AUTO; /* dual: wall */
  s = capture(do_collapsed, &a, &rc);
  got = sorted_lines(s);
  CHECK(strstr(got, "main;A.a;A.b 30") != NULL, "auto is wall on a dual-clock file: %s", got);
  free(s);
  free(got);
}

static void test_speedscope(void) {
  ddmc_host_trace t = make_trace();
  int rc;
  targ a = {&t, EXPORT_CLOCK_WALL};
  char *s = capture(do_speedscope, &a, &rc);
  CHECK(rc == 0, "speedscope rc %d", rc);
  /* The unroll of a closes c, b, a in that order at 100; b, open at the end, closes at 110. */
  const char *main_events =
      "\"events\":[{\"type\":\"O\",\"frame\":0,\"at\":10},{\"type\":\"O\",\"frame\":1,\"at\":30},"
      "{\"type\":\"O\",\"frame\":2,\"at\":60},{\"type\":\"C\",\"frame\":2,\"at\":100},"
      "{\"type\":\"C\",\"frame\":1,\"at\":100},{\"type\":\"C\",\"frame\":0,\"at\":100},"
      "{\"type\":\"O\",\"frame\":1,\"at\":110},{\"type\":\"C\",\"frame\":1,\"at\":110}],\"endValue\":110";
  CHECK(s && strstr(s, main_events) != NULL, "speedscope main events:\n%s", s);
  CHECK(s && strstr(s, "{\"name\":\"(unknown 0x50)\"}") != NULL, "the unknown methods are frames too: %s", s);
  CHECK(s && strstr(s, "\"name\":\"A.a\",\"file\":\"A.java\",\"line\":3") != NULL, "frame file and line: %s", s);
  free(s);
}

static void test_errors(void) {
  ddmc_host_trace t = make_trace();
  t.rec_size = 10;
  strcpy(t.clock, "wall");
  int rc;
  targ a = {&t, EXPORT_CLOCK_CPU};
  free(capture(do_collapsed, &a, &rc));
  CHECK(rc == DDMC_EINVAL, "cpu clock of a wall-only file: %d", rc);
  free(capture(do_pprof, &a, &rc));
  CHECK(rc == DDMC_EINVAL, "pprof, cpu clock of a wall-only file: %d", rc);
  strcpy(t.clock, "thread-cpu");
  a.clock = EXPORT_CLOCK_WALL;
  free(capture(do_speedscope, &a, &rc));
  CHECK(rc == DDMC_EINVAL, "wall clock of a cpu-only file: %d", rc);
  t = make_trace();
  FILE *full = fopen("/dev/full", "w");
  CHECK(full != NULL, "/dev/full");
  if (full) {
    setvbuf(full, NULL, _IONBF, 0);
    CHECK(export_collapsed(full, &t, EXPORT_CLOCK_WALL) == DDMC_EIO, "collapsed to a full disk");
    CHECK(export_speedscope(full, &t, EXPORT_CLOCK_WALL, NULL) == DDMC_EIO, "speedscope to a full disk");
    CHECK(export_pprof_trace(full, &t, EXPORT_CLOCK_WALL) == DDMC_EIO, "pprof to a full disk");
    fclose(full);
  }
  CHECK(export_collapsed(NULL, &t, EXPORT_CLOCK_WALL) == DDMC_EINVAL, "NULL out");
}

static int do_perfetto(FILE *f, void *a) { return export_perfetto(f, a, 2); }

static void test_perfetto(void) {
  /* VM 1: thread 1 running, running, sleeping, then gone; thread 2 only in the last snapshot. */
  ddmc_host_thst_entry s0[] = {{1, 1, 100, 0, 0, 0}}, s1[] = {{1, 1, 100, 0, 0, 0}},
                       s2[] = {{1, 2, 100, 0, 0, 0}}, s3[] = {{2, 4, 101, 0, 0, 0}};
  export_thst_snap snaps[] = {{1000, s0, 1}, {1100, s1, 1}, {1200, s2, 1}, {1300, s3, 1}};
  export_heap_snap heap[] = {{1050, {1, 0, 1, 1000, 900, 500, 7}}};
  export_gc gcs[] = {{1250, 0}, {1260, 15}};
  export_thread_name names[] = {{1, "main"}};
  export_vm vms[2] = {{42, "app", names, 1, snaps, 4, heap, 1, gcs, 2}, {0, NULL, NULL, 0, NULL, 0, NULL, 0, NULL, 0}};
  vms[1].thst = snaps; /* the second VM (pid 0: numbered 2) sees the same, from 900 on */
  export_thst_snap early[] = {{900, s0, 1}};
  vms[1].thst = early;
  vms[1].nthst = 1;
  int rc;
  char *s = capture(do_perfetto, vms, &rc);
  CHECK(rc == 0, "perfetto rc %d", rc);
  const char *want[] = {
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":42,\"args\":{\"name\":\"app\"}}",
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":42,\"tid\":1,\"args\":{\"name\":\"main\"}}",
      /* running over the first two snapshots: from 1000 to 1200, made relative to 900 */
      "{\"name\":\"running\",\"cat\":\"thread_state\",\"ph\":\"X\",\"ts\":100,\"dur\":200,\"pid\":42,\"tid\":1",
      "{\"name\":\"sleeping\",\"cat\":\"thread_state\",\"ph\":\"X\",\"ts\":300,\"dur\":100,\"pid\":42,\"tid\":1",
      "{\"name\":\"heap bytes\",\"ph\":\"C\",\"ts\":150,\"pid\":42,\"args\":{\"allocated\":500,\"footprint\":900}}",
      "{\"name\":\"heap objects\",\"ph\":\"C\",\"ts\":150,\"pid\":42,\"args\":{\"allocated\":7}}",
      "{\"name\":\"GC\",\"cat\":\"gc\",\"ph\":\"i\",\"ts\":350,\"s\":\"t\",\"pid\":42,\"tid\":0}",
      "{\"name\":\"GC\",\"cat\":\"gc\",\"ph\":\"X\",\"ts\":360,\"dur\":15,\"pid\":42,\"tid\":0}",
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"\"}}",
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    CHECK(s && strstr(s, want[i]) != NULL, "perfetto lacks %s\nin %s", want[i], s);
  /* Thread 2's wait is seen in the last snapshot only: no length yet, no slice. */
  CHECK(s && strstr(s, "\"name\":\"wait\"") == NULL, "a state of the last snapshot only: %s", s);
  free(s);
}

int main(void) {
  test_collapsed();
  test_speedscope();
  test_errors();
  test_perfetto();
  if (failures) {
    fprintf(stderr, "test_export: %d failures\n", failures);
    return 1;
  }
  printf("test_export: all passed\n");
  return 0;
}
