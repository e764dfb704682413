/* SPDX-License-Identifier: Apache-2.0 */
/* An agent whose Agent_OnLoad fails (returns 7), after checking that bad calls get clear JVM TI
 * errors rather than crashes (tests/jvmti): its options name what to try first. */
#include <jvmti.h>
#include <stdio.h>
#include <string.h>

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  jvmtiEnv *jvmti = NULL;
  if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION) != JNI_OK) return 1;
  if (options && strcmp(options, "probe") == 0) {
    jvmtiPhase phase = 0;
    jthread t;
    jvmtiError err = (*jvmti)->GetPhase(jvmti, &phase);
    printf("badagent: GetPhase %d phase %d\n", err, (int)phase);
    printf("badagent: GetPhase(NULL) %d\n", (*jvmti)->GetPhase(jvmti, NULL));
    printf("badagent: GetCurrentThread %d\n", (*jvmti)->GetCurrentThread(jvmti, &t));
    printf("badagent: GetAllThreads %d\n", (*jvmti)->GetAllThreads(jvmti, NULL, NULL));
    printf("badagent: GetClassSignature(NULL) %d\n", (*jvmti)->GetClassSignature(jvmti, NULL, NULL, NULL));
    printf("badagent: GetBytecodes %d\n", (*jvmti)->GetBytecodes(jvmti, NULL, NULL, NULL));
    fflush(stdout);
  }
  return 7;
}
