# SPDX-License-Identifier: Apache-2.0
# Debian packages and the source tarball, with CPack. From a built tree:
#   cpack -G DEB                                  libddmc0, libddmc-dev, ddmc (.deb, one per component)
#   cpack --config CPackSourceConfig.cmake -G TGZ libddmc-<version>.tar.gz
# The install components are declared with the install rules (top CMakeLists.txt, tools/); this
# file maps them to packages. docs/install.md shows the use, tests/package/ checks the result
# (contents, a consumer built against the unpacked tree, lintian).
#
# lintian (Debian 12) on the three .debs: no error and no hardening-* tag (cmake/hardening.cmake
# builds with dpkg-buildflags' defaults and links with -z relro -z now); the warnings left, all
# understood:
# - initial-upload-closes-no-bugs (each package): Debian's first upload of a package closes its
#   ITP bug; these are not uploaded to Debian, and a made-up bug number would be false.
# - libddmc0: maintainer-script-empty (postinst, postrm): the two no-op scripts in
#   cmake/debian/libddmc0/ stop CPack from writing ones that call ldconfig (which would be
#   maintscript-calls-ldconfig, twice); the ldconfig trigger does that job.
# - libddmc0: shared-library-lacks-version and lacks-unversioned-link-to-shared-library for
#   libddmcjdwp.so: the JVM TI agent is loaded by its file name (-agentlib:ddmcjdwp), which is
#   its contract (agent/jdwp/CMakeLists.txt), not linked against, so it has no version to carry.
# Informational tags (lintian -I) are choices: no-symbols-control-file (the shlibs file with ">="
# and the symbol version node give dependent packages their lower bound), unstripped-static-library
# (the static library keeps its debugging sections), binary-has-unneeded-section .comment.
# tests/package/test_install.py fails on any E: line and on any hardening-* tag, I: ones included.

# Sanitizer, coverage and fuzzing builds are not for installing: their library needs the
# sanitizer runtime first in the process, and its packages would say so in their dependencies.
if(DDMC_SANITIZE OR DDMC_COVERAGE OR DDMC_FUZZ OR NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(_ddmc_pkg_default OFF)
else()
  set(_ddmc_pkg_default ON)
endif()
option(DDMC_PACKAGING "cpack configuration for the .debs and the source tarball, and their install test"
  ${_ddmc_pkg_default})
if(NOT DDMC_PACKAGING)
  return()
endif()

set(DDMC_DEB_RELEASE 1)
set(DDMC_DEB_VERSION "${PROJECT_VERSION}-${DDMC_DEB_RELEASE}")
set(DDMC_PACKAGE_MAINTAINER "libddmc maintainers <maintainers@users.noreply.a-seed-be75da8c.example>"
  CACHE STRING "Maintainer field of the Debian packages")

# The JDWP JVM TI agent (agent/jdwp), when built: it ships in libddmc0, in the library directory
# where -agentlib:ddmcjdwp finds it (no link: it is loaded with -agentpath or -agentlib; libddmc is
# linked into it, so it needs nothing of this package but its place).
if(TARGET ddmcjdwp)
  install(TARGETS ddmcjdwp LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_SKIP)
  # Android's DDM API for the app: the agent looks for it next to itself (agent/README.md).
  install(FILES ${DDMC_AGENT_DDM_JAR} DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
endif()

# One version everywhere: the top entry of the Debian changelog must be this release.
set(_changelog ${CMAKE_CURRENT_LIST_DIR}/debian/changelog)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_changelog})
file(STRINGS ${_changelog} _top LIMIT_COUNT 1)
if(NOT _top MATCHES "^libddmc \\(${DDMC_DEB_VERSION}\\) ")
  message(FATAL_ERROR "cmake/debian/changelog's first entry is '${_top}', but this is version "
    "${DDMC_DEB_VERSION} (include/ddmc/version.h and DDMC_DEB_RELEASE): add an entry for it.")
endif()
# Compressed at configure time (gzip -9n: no name or time stamp inside, so rebuilds are identical).
find_program(DDMC_GZIP gzip REQUIRED)
set(_changelog_gz ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog.Debian.gz)
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/debian)
execute_process(COMMAND ${DDMC_GZIP} -9n -c ${_changelog} OUTPUT_FILE ${_changelog_gz} RESULT_VARIABLE _rc)
if(_rc)
  message(FATAL_ERROR "gzip of ${_changelog} failed: ${_rc}")
endif()

# Every package carries /usr/share/doc/<package>/{copyright,changelog.Debian.gz} (Debian policy
# 12.5, 12.7). EXCLUDE_FROM_ALL: only a component install (cpack) puts them there, not a plain
# `cmake --install` into /usr/local.
set(_pkg_runtime libddmc0)
set(_pkg_dev libddmc-dev)
set(_pkg_tool ddmc)
set(_components runtime dev)
if(TARGET ddmc_cli)
  list(APPEND _components tool)
endif()
foreach(_c ${_components})
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/copyright ${_changelog_gz}
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${_pkg_${_c}} COMPONENT ${_c} EXCLUDE_FROM_ALL)
endforeach()

set(CPACK_PACKAGE_NAME libddmc)
set(CPACK_PACKAGE_VENDOR "The libddmc authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${DDMC_PACKAGE_MAINTAINER})
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPackDeb would put it before each package's own synopsis.
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_RESOURCE_FILE_README ${PROJECT_SOURCE_DIR}/README.md)
set(CPACK_GENERATOR DEB)
# CPACK_PACKAGING_INSTALL_PREFIX: DEB defaults to /usr (setting it would also move the source
# tarball's files under usr/).
set(CPACK_STRIP_FILES ON) # executables and shared libraries; CMake never strips a static library
set(CPACK_COMPONENTS_ALL ${_components})

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # <package>_<version>-<release>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE ${DDMC_DEB_RELEASE})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${DDMC_PACKAGE_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_SOURCE libddmc)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON) # dpkg-shlibdeps (dpkg-dev) computes Depends from the ELF files
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON) # libddmc0's shlibs file, and its ldconfig trigger
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON) # libddmc-dev: Depends libddmc0 (= this version)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${_pkg_runtime})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
# dpkg's ldconfig trigger instead of the ldconfig calls CPack would write into postinst/postrm
# (lintian: lacks-ldconfig-trigger, maintscript-calls-ldconfig); the two scripts do nothing.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/debian/libddmc0/triggers
  ${CMAKE_CURRENT_LIST_DIR}/debian/libddmc0/postinst ${CMAKE_CURRENT_LIST_DIR}/debian/libddmc0/postrm)
# Descriptions: the synopsis, then the long text; lines under 80 columns (lintian).
set(_about "libddmc lets a virtual machine be monitored and debugged like an Android app
VM: it answers DDM (the Dalvik Debug Monitor protocol that ddmlib and Android
Studio speak: threads, heap, allocation tracking, method tracing, heap dumps)
and JDWP (jdb, IDEs through JDI), over TCP or adb's jdwp transport, and offers
a JVM TI subset for agents.")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "in-VM half of Android's DDM protocol and of JDWP (library)
${_about}
.
This package contains the shared library.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME ${_pkg_dev})
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# The headers and the static library need zlib's (ddmcConfig.cmake and ddmc.pc ask for it).
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "zlib1g-dev")
set(CPACK_DEBIAN_DEV_DESCRIPTION "in-VM half of Android's DDM protocol and of JDWP (development)
${_about}
.
This package contains the headers, the static library, the CMake package
(find_package(ddmc)) and the pkg-config file (ddmc.pc).")

set(CPACK_DEBIAN_TOOL_PACKAGE_NAME ${_pkg_tool})
set(CPACK_DEBIAN_TOOL_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_TOOL_DESCRIPTION "command-line monitor for Android-style VMs (DDM)
ddmc connects to a VM that speaks DDM over JDWP (one embedding libddmc, or an
Android app through adb) and shows what the Dalvik Debug Monitor would: VM
information, threads and their stacks, the heap and a picture of it,
allocation tracking, method traces and heap dumps, as text or JSON.")

# The source tarball: the tree as it is, without version control and build trees.
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_PACKAGE_FILE_NAME "libddmc-${PROJECT_VERSION}")
string(REGEX REPLACE "([][+.*?()^$|\\\\])" "\\\\\\1" _src_re "${PROJECT_SOURCE_DIR}")
string(REGEX REPLACE "([][+.*?()^$|\\\\])" "\\\\\\1" _bin_re "${PROJECT_BINARY_DIR}")
set(CPACK_SOURCE_IGNORE_FILES
  "^${_src_re}/\\.git(/|$)"          # a clone's .git directory, or a worktree's .git file
  "^${_src_re}/(build|out)[^/]*(/|$)" # the build trees the README and scripts use
  "^${_bin_re}(/|$)"                  # this build tree, whatever its name, if it is inside
  "/__pycache__/" "\\.pyc$" "\\.o$" "~$" "\\.swp$")
set(CPACK_VERBATIM_VARIABLES TRUE) # the regexes and descriptions reach cpack as written here

include(CPack)

cpack_add_component(runtime DISPLAY_NAME "Shared library" REQUIRED)
cpack_add_component(dev DISPLAY_NAME "Development files" DEPENDS runtime)
if(TARGET ddmc_cli)
  cpack_add_component(tool DISPLAY_NAME "ddmc command-line monitor")
endif()
