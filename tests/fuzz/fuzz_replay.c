/*
 * Runs the frame fuzz target without libFuzzer, so that make check exercises
 * it everywhere:
 *   fuzz_replay                     the seeds, then random mutations of them
 *                                   (FUZZ_ITERATIONS, default 500000; FUZZ_SEED)
 *   fuzz_replay FILE|DIR...         replays a corpus or crash files
 *   fuzz_replay --write-seeds DIR   writes the seeds as a starting corpus
 * A finding aborts (the target checks what it relies on).
 */
#include "fuzz_frame.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FZ_MAX_INPUT 8192

static uint64_t rng_state;

static uint64_t rng(void)
{
    uint64_t x = (rng_state += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static long replay_file(const char *path)
{
    static uint8_t buf[1 << 20];
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    return 1;
}

static long replay_path(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(sb.st_mode))
        return replay_file(path);
    DIR *d = opendir(path);
    struct dirent *e;
    long count = 0;
    char sub[4096];
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
        long c = replay_file(sub);
        if (c < 0)
            return -1;
        count += c;
    }
    if (d)
        closedir(d);
    return count;
}

/* One mutation of `in`: flips, random bytes, interesting values, cuts,
 * duplicated spans; keeps the first byte (the scenario) most of the time. */
static size_t mutate(const uint8_t *in, size_t len, uint8_t *out)
{
    static const uint64_t interesting[] = { 0, 1, 7, 8, 47, 48, 49, 255, 256, 4096, 65535,
                                            65536, 65537, 1u << 26, (1u << 26) + 1, UINT32_MAX,
                                            UINT64_MAX, UINT64_MAX - 7, UINT64_MAX - 15 };
    memcpy(out, in, len);
    int rounds = 1 + (int)(rng() % 8);
    for (int r = 0; r < rounds && len > 0; r++) {
        size_t at = (size_t)(rng() % len);
        switch (rng() % 6) {
        case 0:
            out[at] ^= (uint8_t)(1u << (rng() % 8));
            break;
        case 1:
            out[at] = (uint8_t)rng();
            break;
        case 2: {   /* an interesting little-endian value at an 8-aligned field */
            uint64_t v = interesting[rng() % (sizeof(interesting) / sizeof(interesting[0]))];
            size_t w = (size_t)1 << (rng() % 4), pos = 1 + ((at - (at > 0)) & ~(size_t)7);
            for (size_t k = 0; k < w && pos + k < len; k++)
                out[pos + k] = (uint8_t)(v >> (8 * k));
            break;
        }
        case 3:
            len = at + 1;
            break;
        case 4:
            if (len < FZ_MAX_INPUT / 2) {
                size_t span = (size_t)(rng() % (len - at)) + 1;
                memmove(out + at + span, out + at, len - at);
                len += span;
            }
            break;
        case 5:
            if (at > 0 && rng() % 4 == 0)
                out[0] = (uint8_t)rng();
            break;
        }
    }
    return len;
}

int main(int argc, char **argv)
{
    static uint8_t seeds[8][FZ_MAX_INPUT], buf[FZ_MAX_INPUT];
    size_t seedlen[8];
    int nseeds = 0;
    for (; nseeds < 8; nseeds++)
        if ((seedlen[nseeds] = fuzz_frame_seed(nseeds, seeds[nseeds], FZ_MAX_INPUT)) == 0)
            break;

    if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0) {
        mkdir(argv[2], 0777);
        for (int i = 0; i < nseeds; i++) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/seed-%d", argv[2], i);
            FILE *f = fopen(path, "wb");
            if (f == NULL || fwrite(seeds[i], 1, seedlen[i], f) != seedlen[i] || fclose(f) != 0) {
                perror(path);
                return 1;
            }
        }
        return 0;
    }
    if (argc > 1) {
        long total = 0;
        for (int i = 1; i < argc; i++) {
            long c = replay_path(argv[i]);
            if (c < 0)
                return 1;
            total += c;
        }
        printf("fuzz_replay: %ld inputs replayed, no finding\n", total);
        return 0;
    }
    const char *it = getenv("FUZZ_ITERATIONS"), *sd = getenv("FUZZ_SEED");
    long iters = it ? strtol(it, NULL, 0) : 500000;
    rng_state = sd ? strtoull(sd, NULL, 0) : 0x5eed;
    for (int i = 0; i < nseeds; i++)
        LLVMFuzzerTestOneInput(seeds[i], seedlen[i]);
    for (long i = 0; i < iters; i++) {
        int s = (int)(rng() % (uint64_t)nseeds);
        size_t len;
        if (rng() % 16 == 0) {  /* plain noise now and then */
            len = (size_t)(rng() % 512);
            for (size_t k = 0; k < len; k++)
                buf[k] = (uint8_t)rng();
        } else {
            len = mutate(seeds[s], seedlen[s], buf);
        }
        LLVMFuzzerTestOneInput(buf, len);
    }
    printf("fuzz_replay: %d seeds and %ld mutated inputs, no finding\n", nseeds, iters);
    return 0;
}
