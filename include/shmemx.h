/*
 * symrail's extensions to OpenSHMEM.  Programs that include only shmem.h
 * never see these names.
 */
#ifndef SHMEMX_H
#define SHMEMX_H

#include <shmem.h>

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif
#ifdef __cplusplus
extern "C" {
#endif

/* Defined when this header is symrail's. */
#define SHMEMX_SYMRAIL 1

/* Seconds since an arbitrary point, from a monotonic clock. */
double shmemx_wtime(void);

/* The native context of a shmem context: one handle serves both APIs, so
 * a program may pass a shmem_ctx_t to symrail_ctx_* calls (symrail.h). */
#define SHMEMX_CTX_NATIVE(ctx) ((struct symrail_ctx *)(ctx))

#ifdef __cplusplus
}
#endif
#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#endif /* SHMEMX_H */
