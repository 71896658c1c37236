/* Shared by the libFuzzer target and the plain replay driver. */
#ifndef SR_FUZZ_FRAME_H
#define SR_FUZZ_FRAME_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Seed input i (0 .. 5) into buf; its length, or 0 past the last seed. */
size_t fuzz_frame_seed(int i, uint8_t *buf, size_t cap);

#endif
