/*
 * OpenSHMEM 1.6 on symrail.
 *
 * The typed families of the specification (RMA, atomics, point-to-point
 * synchronisation, collectives, reductions) are written once as
 * X-macro tables, SHMEM_X_*_TYPES(X, ...), each calling X(NAME, TYPE, ...)
 * once a type; the prototypes, the C11 type-generic names and the C++
 * overloads are all generated from the same tables, so they cannot disagree.
 *
 * Handles:
 *   shmem_ctx_t   is the native context (struct symrail_ctx *): one handle
 *                 serves symrail.h and shmem.h; a team context is a native
 *                 context whose `team` field names the team.
 *   shmem_team_t  is the core's team (struct sr_team *).  SHMEM_TEAM_WORLD
 *                 and SHMEM_TEAM_SHARED are the addresses of two objects
 *                 the library defines (src/shmem/team.c):
 *                     struct sr_team shmemx_team_world_obj_;
 *                     struct sr_team shmemx_team_shared_obj_;
 *                 and SHMEM_CTX_DEFAULT is that of symrail_ctx_default.
 *
 * Type-generic names (shmem_put, shmem_atomic_add, shmem_sum_reduce, ...)
 * are macros using _Generic in C11 and overloaded inline functions in C++.
 * Their associations name only the standard C types (char ... long double),
 * never int64_t and the like, which are typedefs of those and would collide;
 * a pointer to a fixed-width type therefore selects the function of the
 * standard type it is.  A type the specification does not list for a name
 * fails to compile (in C as a call of shmemx_generic_type_error_ with too
 * many arguments).
 *
 * Deprecated names are declared with the deprecated attribute; define
 * SHMEMX_NO_DEPRECATION_WARNINGS before including this header to silence it.
 *
 * The declarations live in parts included below, in this order, each whole
 * only here: shmem_types.h (constants, handles, the type tables),
 * shmem_setup.h, shmem_rma.h (with signals), shmem_amo.h (with ordering),
 * shmem_p2p.h (with locks), shmem_coll.h (with teams) and shmem_generic.h.
 */
#ifndef SHMEM_H
#define SHMEM_H

#include <stddef.h>
#include <stdint.h>
#include <limits.h>

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

#include "shmem_types.h"
#include "shmem_setup.h"
#include "shmem_rma.h"
#include "shmem_amo.h"
#include "shmem_p2p.h"
#include "shmem_coll.h"

/* Never defined: a type-generic call with a type the specification does not
 * list selects it and fails to compile. */
void shmemx_generic_type_error_(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#include "shmem_generic.h"

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* SHMEM_H */
