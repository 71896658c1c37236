/*
 * What the copy engine needs to know of this CPU and its caches: the
 * strategy per CPU (sr_copy_pick, with what was measured on AMD), where
 * streaming stores start, and whether `rep movsb` is fast.
 */
#include "config.h"
#include "util/copy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int sr_copy_sysfs(const char *dir, int index, const char *what, char *buf, size_t len)
{
    char path[512];
    if (snprintf(path, sizeof(path), "%s/index%d/%s", dir, index, what) >= (int)sizeof(path))
        return -1;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    int ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    return ok ? 0 : -1;
}

size_t sr_copy_cpu_count(const char *list)
{
    size_t n = 0;
    while (*list >= '0' && *list <= '9') {
        char *end;
        unsigned long a = strtoul(list, &end, 10), b = a;
        if (*end == '-')
            b = strtoul(end + 1, &end, 10);
        n += b >= a ? b - a + 1 : 1;
        list = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* sysconf's value comes from CPUID, which in a virtual machine may
 * describe the host (320 MiB for a guest whose kernel says 32 MiB shared by
 * its 2 CPUs): the kernel's description is read instead. */
size_t sr_copy_llc_share(const char *dir)
{
    int top = 0;
    size_t share = 0;
    for (int i = 0; i < 8; i++) {
        char buf[4096]; /* a CPU list of a large machine numbered alternately */
        if (sr_copy_sysfs(dir, i, "level", buf, sizeof(buf)) != 0)
            break;
        int level = atoi(buf);
        if (level < top || sr_copy_sysfs(dir, i, "type", buf, sizeof(buf)) != 0 ||
            strncmp(buf, "Instruction", 11) == 0 ||
            sr_copy_sysfs(dir, i, "size", buf, sizeof(buf)) != 0)
            continue;
        char *unit;
        size_t size = strtoull(buf, &unit, 10);
        size <<= *unit == 'K' ? 10 : *unit == 'M' ? 20 : 0;
        size_t cpus = sr_copy_sysfs(dir, i, "shared_cpu_list", buf, sizeof(buf)) == 0
                          ? sr_copy_cpu_count(buf) : 0;
        top = level;
        share = cpus ? size / cpus : 0;  /* 0: sysconf's guess instead */
    }
    return share;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>

int sr_copy_has_erms(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    return (b >> 9) & 1;
}

/* 3/4 of this CPU's share of the last-level cache, as glibc's memcpy. */
size_t sr_copy_nt_default(void)
{
    size_t share = sr_copy_llc_share("/sys/devices/system/cpu/cpu0/cache");
    if (share == 0) {
        long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (llc <= 0)
            llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
        if (llc <= 0 || cpus <= 0)
            return SR_COPY_NT_FLOOR;
        share = (size_t)llc / (size_t)cpus;
    }
    share = share * 3 / 4;
    return share > SR_COPY_NT_FLOOR ? share : SR_COPY_NT_FLOOR;
}

/*
 * AMD Zen 5 (an EPYC with AVX-512 on full-width units, 48 KiB L1d; copy_micro,
 * cache-hot GB/s) differs from the Xeon at the top of copy.c in two ways.  Split loads cost
 * next to nothing: a put from +16 runs at 237 with unaligned loads against
 * 161 with the permute, and a get into +16 at 176 backwards against 161 with
 * the permute going backwards (4 KiB; 220 against 169 at 16 KiB).  So there
 * the split-load loops take the pairs the permutes took.  The vector loops
 * also beat `rep movsb` cache-hot as long as both buffers fit the L1 (16 KiB
 * aligned: 246 against 153; at 32 KiB movsb wins, 159 against 115), but
 * 16 KiB pairs whose lines line up stay with movsb, as on the Xeon: KV
 * blocks of 16 KiB come from pools far larger than the caches, where movsb
 * was ahead (19.3 against 18.0 GB/s cache-cold, copy_bench).
 *
 * On Zen 4 (an EPYC of family 0x19 with AVX-512 on 256-bit units, 32 KiB
 * L1d) `rep movsb` collapses on the pairs that alias a forward loop at
 * every size, from the caches and from memory alike (get into +16: 6.5
 * GB/s cache-cold from 16 KiB to 16 MiB, where the backward loop runs at
 * 10-12 and movsb at 12-14 for the pairs that do not alias; 9 against 22
 * cache-hot at 16 MiB).  So on AMD those pairs stay
 * in the vector loops at every size (glibc's memcpy leaves movsb there
 * above the L2 size only), and they go forwards: the backward loop wins
 * cache-hot at 4 KiB only (91 against 83 GB/s, equal from 16 KiB), but
 * from memory, with blocks read one after another as a get of KV blocks
 * does, the prefetchers follow the forward loop and not the backward one
 * (get into +16 from a walk over 512 MiB: 11.9 against 6.0 GB/s at 4 KiB,
 * 12.7 against 7.6 at 16 KiB, 13.2 against 11.2 at 64 KiB).  Software
 * prefetches ahead of the loop lost everywhere (9.5-10.6 at 4 KiB).
 *
 * On Zen 4 the AVX2 loop, forwards for every pair, beats the AVX-512 one
 * from memory and from the caches alike (its 512-bit operations run as two
 * halves; a walk over 512 MiB, blocks one after another, GB/s at 4 KiB /
 * 16 KiB / 1 MiB, AVX2 against AVX-512: get into +16 14.8 / 14.1 / 13.5
 * against 11.8 / 11.6 / 11.7; put from +16 12.5 / 12.5 / 12.8 against
 * 11.6 / 11.6 / 11.6; get aligned 13.2 / 12.9 / 12.0 against 10.9 / 11.2 /
 * 10.2; cache-hot put from +16 at 16 KiB 93 against 73).  `rep movsb` is
 * ahead of it only for pairs whose lines line up, by 4% from memory and
 * above 16 KiB (below it loses 20% cache-hot); on pairs that do not line
 * up it loses both ways at every size (put from +16 at 1 MiB: 10.4 against
 * 12.8 cache-cold, 43 against 49 cache-hot).  So Zen 4 copies with AVX2
 * forwards, and with movsb above 16 KiB where the lines line up.  Zen 5's
 * 512-bit units are whole: it keeps the AVX-512 profile.
 */
unsigned sr_copy_amd_family(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d) ||
        !(b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163) /* "AuthenticAMD" */ ||
        !__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    unsigned family = (a >> 8) & 0xf;
    if (family == 0xf)
        family += (a >> 20) & 0xff;
    return family;
}

/* Not inlined: gcc then compares each name it may return with every name
 * sr_copy_make knows, and warns (-Wstring-compare) of those that differ. */
__attribute__((noinline)) const char *sr_copy_pick(int avx512, int avx2, unsigned amd_family)
{
    if (avx512 && amd_family == 0x19)
        return "avx2-fwd";
    if (avx512)
        return amd_family > 0x19 ? "avx512-split" : "avx512";
    return avx2 ? "avx2" : "movsb";
}

#else /* not x86-64 */

const char *sr_copy_pick(int avx512, int avx2, unsigned amd_family)
{
    (void)avx512, (void)avx2, (void)amd_family;
    return "memcpy";
}

int sr_copy_has_erms(void)
{
    return 0;
}

size_t sr_copy_nt_default(void)
{
    return SR_COPY_NT_FLOOR;
}

unsigned sr_copy_amd_family(void)
{
    return 0;
}

#endif
