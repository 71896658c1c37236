/*
 * Batches at their edges (2 PEs; PE 0 writes into a segment of PE 1):
 *  - "notify-timeout": PE 1 never consumes its notifications and PE 0 has
 *    filled its SYMRAIL_NOTIFY_SLOTS slots there; a batch submitted with a
 *    notification to PE 1 moves its data, then ends with
 *    SYMRAIL_ERR_TIMEOUT after SYMRAIL_OP_TIMEOUT (T_OP_TIMEOUT_S, the same
 *    in seconds), and its notification never arrives;
 *  - "threads" (SYMRAIL_THREAD_MULTIPLE): one batch pumped by two threads at
 *    once, one in batch_wait, the other in batch_status (the whole batch
 *    and single tasks), round after round: every task done, the bytes of
 *    each counted once, exactly one notification per round; then rounds
 *    in which the submitting thread pumps the batch only from its progress
 *    (it waits on a second batch) while another thread polls the first and
 *    frees it the moment it sees it done: the pump must be out of it by
 *    then (ThreadSanitizer, which `make check-tsan` runs, or AddressSanitizer
 *    report it otherwise);
 *  - "wakes" (shared memory, a short SYMRAIL_SPIN_COUNT and no
 *    SYMRAIL_SPIN_US, so that PE 1 sleeps at once): PE 1 sleeps in a
 *    barrier while PE 0 writes batches of many small blocks into its
 *    mapped segment; PE 1 is woken a few times a batch at most, not once
 *    every few blocks (each waking costs it a system call and every CPU a
 *    membarrier, and made paged batches 0.4-0.7x of one contiguous task on
 *    a busy host).
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "tcommon.h"

#define BLOCK 8192
#define NTASKS 256
#define SMALL 48    /* free_at_done: tasks of the batch freed (6 windows of 64K) */

typedef struct {
    size_t        len;
    unsigned char desc[SYMRAIL_SEG_DESC_MAX];
} board_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* PE 1 registers `pool` and sends its descriptor; PE 0 imports it. */
static symrail_rseg_t share(board_t *board, unsigned char *pool, size_t len, symrail_seg_t *seg_p)
{
    symrail_rseg_t r = NULL;
    if (symrail_my_pe() == 1) {
        T_CHECK(symrail_seg_register(pool, len, 0, seg_p));
        board_t mine = { sizeof(mine.desc), { 0 } };
        T_CHECK(symrail_seg_export(*seg_p, mine.desc, &mine.len));
        T_CHECK(symrail_put(board, &mine, sizeof(mine), 0));
    }
    T_CHECK(symrail_barrier_all());
    if (symrail_my_pe() == 0)
        T_CHECK(symrail_seg_import(board->desc, board->len, &r));
    return r;
}

/* A pool of NTASKS blocks at PE 1, shared with PE 0, and a source at PE 0. */
typedef struct {
    unsigned char *pool, *src;
    size_t len;
    symrail_seg_t seg;
    symrail_rseg_t r;
} shared_t;

static void shared_open(board_t *board, shared_t *sh)
{
    sh->len = (size_t)NTASKS * BLOCK;
    sh->pool = calloc(1, sh->len);
    sh->src = malloc(sh->len);
    T_ASSERT(sh->pool && sh->src, "memory");
    sh->seg = NULL;
    sh->r = share(board, sh->pool, sh->len, &sh->seg);
}

static void shared_close(shared_t *sh)
{
    if (symrail_my_pe() == 1)
        T_CHECK(symrail_seg_deregister(sh->seg));
    else
        T_CHECK(symrail_rseg_release(sh->r));
    free(sh->pool);
    free(sh->src);
}

static int notify_timeout(board_t *board)
{
    unsigned long slots = t_env("SYMRAIL_NOTIFY_SLOTS", 0), limit = t_env("T_OP_TIMEOUT_S", 0);
    T_ASSERT(slots > 0 && limit > 0, "run with SYMRAIL_NOTIFY_SLOTS and T_OP_TIMEOUT_S");
    unsigned char *pool = calloc(1, BLOCK);
    T_ASSERT(pool != NULL, "memory");
    symrail_seg_t seg = NULL;
    symrail_rseg_t r = share(board, pool, BLOCK, &seg);
    if (symrail_my_pe() == 0) {
        for (unsigned long i = 0; i < slots; i++)
            T_CHECK(symrail_notify_send(1, 5, &i, sizeof(i)));
        unsigned char src[BLOCK];
        t_fill(src, BLOCK, 0, 1);
        symrail_batch_t b;
        T_CHECK(symrail_batch_create(1, &b));
        T_CHECK(symrail_batch_add(b, SYMRAIL_WRITE, src, r, 0, BLOCK, NULL));
        double t0 = now_s();
        T_CHECK(symrail_batch_submit_notify(b, 1, 9, "end", 3));
        symrail_status_t st = symrail_batch_wait(b, -1);
        double dt = now_s() - t0;
        T_ASSERT(st == SYMRAIL_ERR_TIMEOUT, "the batch whose notification finds no slot ended "
                 "with %d (%s), not SYMRAIL_ERR_TIMEOUT", (int)st, symrail_strerror(st));
        T_ASSERT(dt > 0.9 * (double)limit && dt < (double)limit + 5.0,
                 "it ended after %.2f s, SYMRAIL_OP_TIMEOUT is %lu s", dt, limit);
        symrail_task_state_t state;
        T_CHECK(symrail_batch_status(b, 0, &state, NULL));
        T_ASSERT(state == SYMRAIL_TASK_DONE, "its task is in state %d", (int)state);
        T_EXPECT(symrail_batch_status(b, SYMRAIL_BATCH_ALL, &state, NULL), SYMRAIL_ERR_TIMEOUT);
        T_CHECK(symrail_batch_free(b));
        T_CHECK(symrail_rseg_release(r));
        printf("ok: batch: a notification with no free slot ends the batch with "
               "SYMRAIL_ERR_TIMEOUT after %.1f s (SYMRAIL_OP_TIMEOUT %lu s)\n", dt, limit);
    }
    T_CHECK(symrail_barrier_all());
    if (symrail_my_pe() == 1) {
        symrail_notify_t m;
        for (unsigned long i = 0; i < slots; i++) {
            T_CHECK(symrail_notify_wait(10000, &m));
            T_ASSERT(m.tag == 5, "message %lu has tag %u", i, m.tag);
        }
        T_EXPECT(symrail_notify_wait(300, &m), SYMRAIL_ERR_TIMEOUT);
        T_ASSERT(t_verify(pool, BLOCK, 0, 1) == SIZE_MAX, "the batch's data did not land");
        T_CHECK(symrail_seg_deregister(seg));
    }
    free(pool);
    return 0;
}

typedef struct {
    symrail_batch_t b;
    symrail_status_t st;
    unsigned long polls;
} pumper_t;

static void *waiter(void *arg)
{
    pumper_t *p = arg;
    while ((p->st = symrail_batch_wait(p->b, 5)) == SYMRAIL_ERR_TIMEOUT)
        p->polls++;
    return NULL;
}

static void *poller(void *arg)
{
    pumper_t *p = arg;
    symrail_task_state_t state = SYMRAIL_TASK_PENDING;
    for (size_t i = 0; state == SYMRAIL_TASK_PENDING; i++, p->polls++) {
        symrail_task_state_t ts;
        size_t bytes;
        symrail_status_t st = symrail_batch_status(p->b, (i * 37) % NTASKS, &ts, &bytes);
        T_ASSERT(st == SYMRAIL_OK && ts != SYMRAIL_TASK_FAILED && bytes == (ts ? BLOCK : 0),
                 "task %zu: %d (%s), state %d, %zu bytes", (i * 37) % NTASKS, (int)st,
                 symrail_strerror(st), (int)ts, bytes);
        p->st = symrail_batch_status(p->b, SYMRAIL_BATCH_ALL, &state, NULL);
    }
    return NULL;
}

typedef struct {
    symrail_batch_t  b;
    symrail_status_t st, freed;
    symrail_task_state_t state;
} freer_t;

static void *freer(void *arg)
{
    freer_t *f = arg;
    /* Polls that yield leave the owner's progress much of the pumping:
     * the batch often ends there, in the other thread (over TCP: shared
     * memory ends it within its submit). */
    while ((f->st = symrail_batch_status(f->b, SYMRAIL_BATCH_ALL, &f->state, NULL)) ==
               SYMRAIL_OK && f->state == SYMRAIL_TASK_PENDING)
        sched_yield();
    f->freed = symrail_batch_free(f->b);
    return NULL;
}

/* Writes the first `ntasks` blocks of src to the segment; every other block
 * reversed: no two tasks coalesce. */
static symrail_batch_t blocks_batch(symrail_rseg_t r, unsigned char *src, size_t ntasks)
{
    symrail_batch_t b;
    T_CHECK(symrail_batch_create(ntasks, &b));
    for (size_t i = 0; i < ntasks; i++) {
        size_t at = i % 2 ? ntasks - i : i;
        T_CHECK(symrail_batch_add(b, SYMRAIL_WRITE, src + at * BLOCK, r, at * BLOCK, BLOCK,
                                  NULL));
    }
    return b;
}

/* PE 0's side of a round of free_at_done: batch `b` (few tasks) is pumped
 * by this thread's progress while it waits on `big`; the freer frees `b`. */
static void free_round(symrail_rseg_t r, unsigned char *src, int round)
{
    symrail_batch_t b = blocks_batch(r, src, SMALL), big = blocks_batch(r, src, NTASKS);
    T_CHECK(symrail_batch_submit(b));
    T_CHECK(symrail_batch_submit(big));
    freer_t f = { b, SYMRAIL_OK, SYMRAIL_OK, SYMRAIL_TASK_PENDING };
    pthread_t tf;
    T_ASSERT(pthread_create(&tf, NULL, freer, &f) == 0, "pthread_create");
    T_CHECK(symrail_batch_wait(big, -1));
    pthread_join(tf, NULL);
    T_ASSERT(f.st == SYMRAIL_OK && f.state == SYMRAIL_TASK_DONE && f.freed == SYMRAIL_OK,
             "round %d: the batch freed at its end: status %d, state %d, free %d (%s)", round,
             (int)f.st, (int)f.state, (int)f.freed, symrail_strerror(f.freed));
    T_CHECK(symrail_batch_free(big));
}

static int free_at_done(board_t *board)
{
    int rounds = (int)t_env("T_BATCH_FREE_ROUNDS", 200);
    shared_t sh;
    shared_open(board, &sh);
    for (int round = 0; round < rounds; round++) {
        if (symrail_my_pe() == 0) {
            t_fill(sh.src, sh.len, 0, (unsigned)round);
            free_round(sh.r, sh.src, round);
        }
        T_CHECK(symrail_barrier_all());
        if (symrail_my_pe() == 1)
            T_ASSERT(t_verify(sh.pool, sh.len, 0, (unsigned)round) == SIZE_MAX,
                     "round %d: the data did not all land", round);
        T_CHECK(symrail_barrier_all());
    }
    if (symrail_my_pe() == 0)
        printf("ok: batch: %d rounds of a batch freed by another thread the moment it is "
               "done, while its owner's progress pumps it\n", rounds);
    shared_close(&sh);
    return 0;
}

static int two_pumps(board_t *board)
{
    int rounds = (int)t_env("T_BATCH_ROUNDS", 20);
    shared_t sh;
    shared_open(board, &sh);
    unsigned char *pool = sh.pool, *src = sh.src;
    size_t len = sh.len;
    symrail_rseg_t r = sh.r;
    unsigned long polls = 0;
    for (int round = 0; round < rounds; round++) {
        if (symrail_my_pe() == 0) {
            t_fill(src, len, 0, (unsigned)round);
            symrail_batch_t b = blocks_batch(r, src, NTASKS);
            T_CHECK(symrail_batch_submit_notify(b, 1, 40 + (uint32_t)round, &round,
                                                sizeof(round)));
            pumper_t pw = { b, SYMRAIL_OK, 0 }, pp = { b, SYMRAIL_OK, 0 };
            pthread_t tw, tp;
            T_ASSERT(pthread_create(&tw, NULL, waiter, &pw) == 0, "pthread_create");
            T_ASSERT(pthread_create(&tp, NULL, poller, &pp) == 0, "pthread_create");
            pthread_join(tw, NULL);
            pthread_join(tp, NULL);
            T_CHECK(pw.st);
            T_CHECK(pp.st);
            size_t bytes = 0;
            symrail_task_state_t state;
            T_CHECK(symrail_batch_status(b, SYMRAIL_BATCH_ALL, &state, &bytes));
            T_ASSERT(state == SYMRAIL_TASK_DONE && bytes == len,
                     "round %d: batch state %d, %zu bytes of %zu", round, (int)state, bytes, len);
            for (size_t i = 0; i < NTASKS; i++) {
                T_CHECK(symrail_batch_status(b, i, &state, &bytes));
                T_ASSERT(state == SYMRAIL_TASK_DONE && bytes == BLOCK, "task %zu: state %d", i,
                         (int)state);
            }
            T_CHECK(symrail_batch_free(b));
            polls += pw.polls + pp.polls;
        } else {
            symrail_notify_t m;
            T_CHECK(symrail_notify_wait(30000, &m));
            int got;
            memcpy(&got, m.payload, sizeof(got));
            T_ASSERT(m.tag == 40u + (unsigned)round && m.status == SYMRAIL_OK && got == round,
                     "round %d: notification tag %u status %d", round, m.tag, (int)m.status);
            T_ASSERT(t_verify(pool, len, 0, (unsigned)round) == SIZE_MAX,
                     "round %d: the data is not all there at the notification", round);
        }
        T_CHECK(symrail_barrier_all());
    }
    if (symrail_my_pe() == 1) {
        symrail_notify_t m;
        T_EXPECT(symrail_notify_wait(300, &m), SYMRAIL_ERR_TIMEOUT);
    } else {
        printf("ok: batch: %d rounds of %d tasks pumped by two threads at once (%lu waits and "
               "polls), every task done once, one notification each\n", rounds, NTASKS, polls);
    }
    shared_close(&sh);
    return 0;
}

#define WAKE_BLOCK   4096
#define WAKE_TASKS   4096
#define WAKE_BATCHES 4

static int wakes(board_t *board)
{
    size_t len = (size_t)WAKE_TASKS * WAKE_BLOCK;
    symrail_seg_t seg = NULL;
    void *pool = NULL;
    symrail_rseg_t r = NULL;
    if (symrail_my_pe() == 1) {
        T_CHECK(symrail_seg_alloc(len, 0, &pool, &seg));
        board_t mine = { sizeof(mine.desc), { 0 } };
        T_CHECK(symrail_seg_export(seg, mine.desc, &mine.len));
        T_CHECK(symrail_put(board, &mine, sizeof(mine), 0));
    }
    T_CHECK(symrail_barrier_all());
    if (symrail_my_pe() == 0) {
        T_CHECK(symrail_seg_import(board->desc, board->len, &r));
        unsigned char *src = malloc(len);
        uint32_t *li = malloc(WAKE_TASKS * sizeof(uint32_t)), *ri = malloc(WAKE_TASKS * sizeof(uint32_t));
        T_ASSERT(src && li && ri, "memory");
        t_fill(src, len, 0, 7);
        /* Every block to its own place, none next to the one before it:
         * one task a block. */
        for (uint32_t i = 0; i < WAKE_TASKS; i++)
            li[i] = ri[i] = i % 2 ? WAKE_TASKS - i : i;
        /* PE 1 asleep in its barrier before the first block comes. */
        nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
        for (int k = 0; k < WAKE_BATCHES; k++) {
            symrail_batch_t b;
            size_t ntasks = 0;
            T_CHECK(symrail_batch_create(WAKE_TASKS, &b));
            T_CHECK(symrail_batch_add_blocks(b, SYMRAIL_WRITE, src, li, r, 0, ri, WAKE_TASKS,
                                             WAKE_BLOCK, NULL, &ntasks));
            T_ASSERT(ntasks == WAKE_TASKS, "%zu tasks for %d blocks", ntasks, WAKE_TASKS);
            T_CHECK(symrail_batch_submit(b));
            T_CHECK(symrail_batch_wait(b, -1));
            T_CHECK(symrail_batch_free(b));
        }
        T_CHECK(symrail_rseg_release(r));
        free(src);
        free(li);
        free(ri);
    }
    symrail_stats_t s0, s1;
    T_CHECK(symrail_stats(&s0));
    double t0 = now_s();
    T_CHECK(symrail_barrier_all());
    double waited = now_s() - t0;
    T_CHECK(symrail_stats(&s1));
    if (symrail_my_pe() == 1) {
        T_ASSERT(t_verify(pool, len, 0, 7) == SIZE_MAX, "the batches' data did not land");
        unsigned long slept = (unsigned long)(s1.sleeps - s0.sleeps);
        /* A few wakings a batch, and one a sleep slice (20 ms) that ends
         * by itself. */
        unsigned long limit = 4 * WAKE_BATCHES + 8 + (unsigned long)(waited / 0.020);
        T_ASSERT(slept <= limit, "PE 1 went to sleep %lu times in %.0f ms while %d batches of "
                 "%d blocks came (at most %lu expected): woken by blocks, not by batches",
                 slept, waited * 1e3, WAKE_BATCHES, WAKE_TASKS, limit);
        T_CHECK(symrail_seg_deregister(seg));
        printf("ok: batch: a sleeping target is woken by batches, not by their blocks (%lu "
               "sleeps in %.0f ms for %d batches of %d blocks)\n", slept, waited * 1e3,
               WAKE_BATCHES, WAKE_TASKS);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int threads = strcmp(mode, "threads") == 0, provided = 0;
    if (threads)
        T_CHECK(symrail_init_thread(SYMRAIL_THREAD_MULTIPLE, &provided));
    else
        T_CHECK(symrail_init_status());
    if (symrail_n_pes() != 2) {
        printf("SKIP: t_batch runs on 2 PEs\n");
        symrail_finalize();
        return 77;
    }
    board_t *board = symrail_malloc(sizeof(*board));
    T_ASSERT(board != NULL, "memory");
    if (threads) {
        two_pumps(board);
        free_at_done(board);
    }
    else if (strcmp(mode, "notify-timeout") == 0)
        notify_timeout(board);
    else if (strcmp(mode, "wakes") == 0)
        wakes(board);
    else
        T_ASSERT(0, "mode: notify-timeout, threads or wakes");
    T_CHECK(symrail_barrier_all());
    symrail_free(board);
    symrail_finalize();
    return 0;
}
