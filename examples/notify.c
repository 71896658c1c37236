/*
 * Producer/consumer with write + notify, the pattern of a KV-cache engine:
 * PE 0 writes blocks into PE 1's buffer and, after each batch, tells PE 1
 * which blocks are ready with a notification message.
 *
 *   symrun -n 2 ./notify
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <symrail.h>

#define NBLOCKS    64
#define BLOCK      4096
#define BATCH      16
#define TAG_READY  7

typedef struct {
    uint32_t first, last;  /* blocks first..last are ready */
} ready_t;

int main(void)
{
    symrail_init();
    int me = symrail_my_pe(), rc = 0;
    if (symrail_n_pes() < 2) {
        if (me == 0)
            fprintf(stderr, "notify: needs at least 2 PEs\n");
        symrail_finalize();
        return 1;
    }
    unsigned char *blocks = symrail_malloc((size_t)NBLOCKS * BLOCK);

    if (me == 0) {
        unsigned char buf[BLOCK];
        for (uint32_t b = 0; b < NBLOCKS; b++) {
            memset(buf, (int)(b + 1), sizeof(buf));
            symrail_put_nbi(blocks + (size_t)b * BLOCK, buf, BLOCK, 1);
            if ((b + 1) % BATCH == 0) {
                /* The blocks must be in place before anyone hears of them. */
                symrail_quiet();
                ready_t r = { b + 1 - BATCH, b };
                symrail_notify_send(1, TAG_READY, &r, sizeof(r));
            }
        }
    } else if (me == 1) {
        uint32_t seen = 0;
        while (seen < NBLOCKS) {
            symrail_notify_t msg;
            if (symrail_notify_wait(10000, &msg) != SYMRAIL_OK) {
                fprintf(stderr, "notify: no message from PE 0\n");
                rc = 1;
                break;
            }
            ready_t r;
            memcpy(&r, msg.payload, sizeof(r));
            for (uint32_t b = r.first; b <= r.last; b++)
                for (size_t i = 0; i < BLOCK; i++)
                    rc |= blocks[(size_t)b * BLOCK + i] != (unsigned char)(b + 1);
            printf("PE 1: blocks %u..%u ready from PE %d%s\n", r.first, r.last, msg.src_pe,
                   rc ? " (CORRUPT)" : "");
            seen = r.last + 1;
        }
    }
    symrail_free(blocks);
    symrail_finalize();
    return rc;
}
