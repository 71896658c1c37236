/*
 * What code that must step outside the sanitizers' model uses, when the
 * build has --enable-sanitizers=address (GCC says so with
 * __SANITIZE_ADDRESS__, clang with __has_feature); nothing otherwise.
 */
#ifndef SR_UTIL_SANITIZER_H
#define SR_UTIL_SANITIZER_H

#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1
#endif
#endif

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
/* A routine whose loads and stores AddressSanitizer does not check. */
#define SR_NO_ASAN __attribute__((no_sanitize_address))
/* What this thread allocates in between is never reported as a leak. */
#define SR_LSAN_OFF() __lsan_disable()
#define SR_LSAN_ON()  __lsan_enable()
/* Memory of our own mapping that holds pointers to allocations: scanned
 * for them, as LeakSanitizer scans globals and stacks but no mmap. */
#define SR_LSAN_ROOT(p, n)   __lsan_register_root_region((p), (n))
#define SR_LSAN_UNROOT(p, n) __lsan_unregister_root_region((p), (n))
#else
#define SR_NO_ASAN
#define SR_LSAN_OFF() ((void)0)
#define SR_LSAN_ON()  ((void)0)
#define SR_LSAN_ROOT(p, n)   ((void)(p), (void)(n))
#define SR_LSAN_UNROOT(p, n) ((void)(p), (void)(n))
#endif

#endif
