# SPDX-License-Identifier: Apache-2.0
# Debian's default hardening (what `dpkg-buildflags` gives a package build on Debian 12), for every
# target of the tree: the shipped libddmc.so, libddmcjdwp.so and ddmc, and the tests that run the
# same code. Included by the top CMakeLists.txt before the first target, so the directory
# properties set here reach every target. tests/package checks the result (readelf, lintian's
# hardening-* tags); gcc and clang take the same flags.
#
#   -fstack-protector-strong          a canary in every function with a local array or address
#   -Wformat -Werror=format-security  printf("%s")-style calls with a non-literal format fail
#   -D_FORTIFY_SOURCE=2               glibc's checked __*_chk calls; needs optimisation, so only in
#                                     optimised builds (at -O0 glibc warns, which -Werror fails)
#   -z relro -z now                   the GOT read-only after relocation, every symbol bound at load
#   PIE                               executables position-independent (CMAKE_POSITION_INDEPENDENT_CODE
#                                     compiles them so; check_pie_supported links them so)
#
# _FORTIFY_SOURCE is left out of sanitizer, coverage and fuzzing builds: they are not shipped, the
# sanitizers check the same calls themselves (and more precisely than the __*_chk wrappers), and
# coverage builds at -O0. Those builds keep the rest.
include(CheckCCompilerFlag)
include(CheckPIESupported)

check_pie_supported(OUTPUT_VARIABLE _ddmc_pie_msg LANGUAGES C)
if(NOT CMAKE_C_LINK_PIE_SUPPORTED)
  message(WARNING "the linker cannot make PIE executables: ${_ddmc_pie_msg}")
endif()

check_c_compiler_flag(-fstack-protector-strong DDMC_HAVE_STACK_PROTECTOR_STRONG)
if(DDMC_HAVE_STACK_PROTECTOR_STRONG)
  add_compile_options(-fstack-protector-strong)
endif()
add_compile_options(-Wformat -Werror=format-security)

if(NOT DDMC_SANITIZE AND NOT DDMC_COVERAGE AND NOT DDMC_FUZZ)
  # -U first: a compiler that predefines it (Ubuntu's gcc) would otherwise warn of a redefinition.
  set(_ddmc_optimised "$<OR:$<CONFIG:Release>,$<CONFIG:RelWithDebInfo>,$<CONFIG:MinSizeRel>>")
  add_compile_options("$<${_ddmc_optimised}:-U_FORTIFY_SOURCE>" "$<${_ddmc_optimised}:-D_FORTIFY_SOURCE=2>")
endif()

if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_link_options("LINKER:-z,relro" "LINKER:-z,now")
endif()
