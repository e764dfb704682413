# SPDX-License-Identifier: Apache-2.0
# The JDK's C headers (jvmti.h, jni.h and jni_md.h), for code built exactly as an agent for HotSpot
# is: examples/agents (which require them) and the JDWP agent agent/jdwp (built when they are
# found). Sets DDMC_JDK_INCLUDE (cached; -DDDMC_JDK_INCLUDE=... picks another JDK) and
# DDMC_JDK_INCLUDE_DIRS (with the platform directory that holds jni_md.h), or leaves
# DDMC_JDK_INCLUDE-NOTFOUND.
include_guard(GLOBAL)
find_path(DDMC_JDK_INCLUDE jvmti.h
  HINTS $ENV{JAVA_HOME}/include /usr/lib/jvm/default-java/include)
if(DDMC_JDK_INCLUDE)
  set(DDMC_JDK_INCLUDE_DIRS ${DDMC_JDK_INCLUDE} ${DDMC_JDK_INCLUDE}/linux)
endif()
