/* SPDX-License-Identifier: Apache-2.0 */
/* DDMC_EXTERN marks the symbols the shared library exports; everything else is hidden. */
#ifndef DDMC_EXPORT_H
#define DDMC_EXPORT_H

#if defined(_WIN32)
# if defined(BUILDING_DDMC_SHARED)
#  define DDMC_EXTERN __declspec(dllexport)
# elif defined(USING_DDMC_SHARED)
#  define DDMC_EXTERN __declspec(dllimport)
# else
#  define DDMC_EXTERN
# endif
#elif defined(__GNUC__) || defined(__clang__)
# define DDMC_EXTERN __attribute__((visibility("default")))
#else
# define DDMC_EXTERN
#endif

#ifdef __cplusplus
# define DDMC_BEGIN_DECLS extern "C" {
# define DDMC_END_DECLS }
#else
# define DDMC_BEGIN_DECLS
# define DDMC_END_DECLS
#endif

#endif
