/*
 * A shared-memory deregistration that timed out, through the public API:
 * a local peer's copy that never leaves (counted in this PE's generation
 * table, as an importer stuck mid-copy would be) makes
 * symrail_seg_deregister end with SYMRAIL_ERR_TIMEOUT.  While that copy is
 * in, the segment's id stays taken (other registrations get other ids);
 * once it leaves, the id is used again (next generation), so that every id
 * of a small generation table (SYMRAIL_SHM_SEG_SLOTS) can be registered at
 * once.  Run with SYMRAIL_OP_TIMEOUT short and SYMRAIL_SHM_SEG_SLOTS=16.
 */
#include <stdint.h>
#include <string.h>

#include "tcommon.h"
#include "core/region.h"
#include "core/rt.h"
#include "tl/shm/seg.h"
#include "tl/tl.h"
#include "util/sys.h"

#define SLOTS 16

static sr_region_t *reg_of(symrail_seg_t s)
{
    return (sr_region_t *)(void *)s;
}

int main(void)
{
    T_CHECK(symrail_init_status());
    T_ASSERT(t_env("SYMRAIL_SHM_SEG_SLOTS", 0) == SLOTS, "run with SYMRAIL_SHM_SEG_SLOTS=%d",
             SLOTS);
    static unsigned char pool[SLOTS][4096];
    symrail_seg_t seg[SLOTS];
    T_CHECK(symrail_seg_register(pool[0], sizeof(pool[0]), 0, &seg[0]));
    uint32_t id = reg_of(seg[0])->handle.id, gen = reg_of(seg[0])->handle.generation;

    /* The copy of a peer that is stuck, in this PE's generation table. */
    char name[128];
    uint64_t *tab;
    size_t tab_len = sr_shm_gtab_len(SLOTS);
    sr_shm_name(name, sizeof(name), sr_boot_info(sr_rt.boot)->job, symrail_my_pe(), "seg");
    T_CHECK(sr_shm_attach(name, tab_len, (void **)&tab));
    uint64_t *word = (uint64_t *)(void *)((char *)tab + sizeof(sr_shm_gtab_t)) + id;
    __atomic_fetch_add(word, 1, __ATOMIC_ACQ_REL);
    T_EXPECT(symrail_seg_deregister(seg[0]), SYMRAIL_ERR_TIMEOUT);

    /* Its id stays taken while the copy is in. */
    T_CHECK(symrail_seg_register(pool[1], sizeof(pool[1]), 0, &seg[1]));
    T_ASSERT(reg_of(seg[1])->handle.id != id, "id %u was given again with a copy still in", id);
    T_CHECK(symrail_seg_deregister(seg[1]));

    /* The copy leaves: the id is free again, under the next generation, and
     * every id of the table can be registered at once. */
    __atomic_fetch_sub(word, 1, __ATOMIC_ACQ_REL);
    int n = SLOTS - SR_TL_REGION_SEG0, reused = 0;
    for (int i = 0; i < n; i++) {
        T_CHECK(symrail_seg_register(pool[i], sizeof(pool[i]), 0, &seg[i]));
        if (reg_of(seg[i])->handle.id == id) {
            T_ASSERT(reg_of(seg[i])->handle.generation > gen,
                     "id %u registered again under generation %u (was %u)", id,
                     reg_of(seg[i])->handle.generation, gen);
            reused = 1;
        }
    }
    T_ASSERT(reused, "id %u was not used again after its late copy left", id);
    for (int i = 0; i < n; i++)
        T_CHECK(symrail_seg_deregister(seg[i]));
    sr_shm_unmap(tab, tab_len);
    printf("ok: seg: an id whose deregistration timed out is used again once its late copy "
           "left (%d ids registered at once)\n", n);
    symrail_finalize();
    return 0;
}
