/* Segments: the checks of the public calls (the registry is src/core/region.c). */
#include "config.h"
#include "api/api.h"
#include "core/region.h"
#include "util/sys.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int sr_seg_range_ok(const char *fn, const void *addr, size_t len)
{
    if (addr == NULL || len == 0 || (uintptr_t)addr + len < (uintptr_t)addr ||
        len >= SR_DATA_BIT) {
        sr_error("%s: [addr %p, len %zu) is not a range that can be registered", fn, addr, len);
        return 0;
    }
    return 1;
}

symrail_status_t symrail_seg_register(void *addr, size_t len, unsigned flags,
                                      symrail_seg_t *seg_p)
{
    static const char fn[] = "symrail_seg_register";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (seg_p == NULL || flags != 0 || !sr_seg_range_ok(fn, addr, len)) {
        if (seg_p == NULL || flags != 0)
            sr_error("%s: %s", fn, seg_p == NULL ? "seg_p is NULL" : "flags must be 0");
        return SYMRAIL_ERR_INVALID;
    }
    sr_region_t *reg;
    symrail_status_t st = sr_region_register(addr, len, NULL, 0, &reg);
    if (st == SYMRAIL_OK)
        *seg_p = &reg->handle;
    return st;
}

symrail_status_t symrail_seg_alloc(size_t len, unsigned flags, void **addr_p,
                                   symrail_seg_t *seg_p)
{
    static const char fn[] = "symrail_seg_alloc";
    static unsigned serial;
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (addr_p == NULL || seg_p == NULL || flags != 0 || len == 0 || len >= SR_DATA_BIT) {
        sr_error("%s: %s", fn, addr_p == NULL ? "addr_p is NULL" : seg_p == NULL ? "seg_p is NULL"
                               : flags != 0 ? "flags must be 0" : "len is 0 or too large");
        return SYMRAIL_ERR_INVALID;
    }
    char what[32], name[256];
    snprintf(what, sizeof(what), "seg%u", __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
    sr_shm_name(name, sizeof(name), sr_boot_info(sr_rt.boot)->job, sr_rt.my_pe, what);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    len = (len + page - 1) / page * page;
    void *addr;
    symrail_status_t st = sr_shm_create(name, len, page, &addr);
    if (st != SYMRAIL_OK)
        return st;
    sr_region_t *reg;
    st = sr_region_register(addr, len, name, 1, &reg);
    if (st != SYMRAIL_OK) {
        sr_shm_unlink(name);
        sr_shm_unmap(addr, len);
        return st;
    }
    *addr_p = addr;
    *seg_p = &reg->handle;
    return SYMRAIL_OK;
}

symrail_status_t symrail_seg_deregister(symrail_seg_t seg)
{
    static const char fn[] = "symrail_seg_deregister";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    sr_region_t *reg = sr_region_of(fn, seg);
    if (reg == NULL)
        return SYMRAIL_ERR_INVALID;
    if (reg->refs == 1 && reg->busy == 0)
        sr_seg_names_drop(seg);
    symrail_status_t st = sr_region_deregister(reg);
    if (st == SYMRAIL_ERR_STATE)
        sr_error("%s: segment %u is in use by a batch in flight", fn, seg->id);
    return st;
}

symrail_status_t symrail_seg_info(symrail_seg_t seg, void **addr_p, size_t *len_p)
{
    SR_API_UP("symrail_seg_info", SYMRAIL_ERR_INVALID);
    sr_region_t *reg = sr_region_of("symrail_seg_info", seg);
    if (reg == NULL)
        return SYMRAIL_ERR_INVALID;
    if (addr_p)
        *addr_p = reg->addr;
    if (len_p)
        *len_p = reg->len;
    return SYMRAIL_OK;
}

symrail_status_t symrail_seg_export(symrail_seg_t seg, void *buf, size_t *len_p)
{
    static const char fn[] = "symrail_seg_export";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    sr_region_t *reg = sr_region_of(fn, seg);
    if (reg == NULL)
        return SYMRAIL_ERR_INVALID;
    if (len_p == NULL || (buf == NULL && *len_p != 0)) {
        sr_error("%s: %s", fn, len_p == NULL ? "len_p is NULL" : "buf is NULL");
        return SYMRAIL_ERR_INVALID;
    }
    symrail_status_t st = sr_region_export(reg, buf, len_p);
    if (st == SYMRAIL_ERR_TRUNCATED)
        sr_error("%s: the descriptor takes %zu bytes, more than buf has", fn, *len_p);
    return st;
}

symrail_status_t symrail_seg_import(const void *buf, size_t len, symrail_rseg_t *rseg_p)
{
    static const char fn[] = "symrail_seg_import";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (buf == NULL || rseg_p == NULL) {
        sr_error("%s: %s is NULL", fn, buf == NULL ? "buf" : "rseg_p");
        return SYMRAIL_ERR_INVALID;
    }
    return sr_region_import(buf, len, rseg_p);
}

symrail_status_t symrail_rseg_info(symrail_rseg_t rseg, int *pe_p, size_t *len_p)
{
    SR_API_UP("symrail_rseg_info", SYMRAIL_ERR_INVALID);
    struct symrail_rseg *rs = sr_rseg_of("symrail_rseg_info", rseg);
    if (rs == NULL)
        return SYMRAIL_ERR_INVALID;
    if (pe_p)
        *pe_p = rs->pe;
    if (len_p)
        *len_p = (size_t)rs->len;
    return SYMRAIL_OK;
}

symrail_status_t symrail_rseg_release(symrail_rseg_t rseg)
{
    SR_API_UP("symrail_rseg_release", SYMRAIL_ERR_INVALID);
    struct symrail_rseg *rs = sr_rseg_of("symrail_rseg_release", rseg);
    if (rs == NULL)
        return SYMRAIL_ERR_INVALID;
    if (__atomic_load_n(&rs->busy, __ATOMIC_RELAXED)) {
        sr_error("symrail_rseg_release: %u tasks of batches use it (reset or free them first)",
                 rs->busy);
        return SYMRAIL_ERR_STATE;
    }
    sr_region_release(rs);
    return SYMRAIL_OK;
}

static int sr_seg_name_ok(const char *fn, const char *name)
{
    if (name != NULL && name[0] != '\0' && strlen(name) <= SR_SEG_NAME_MAX)
        return 1;
    sr_error("%s: name is %s", fn, name == NULL ? "NULL" : name[0] == '\0' ? "empty"
                                   : "longer than 200 bytes");
    return 0;
}

symrail_status_t symrail_seg_publish(symrail_seg_t seg, const char *name)
{
    static const char fn[] = "symrail_seg_publish";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (sr_region_of(fn, seg) == NULL || !sr_seg_name_ok(fn, name))
        return SYMRAIL_ERR_INVALID;
    return sr_seg_publish(seg, name);
}

symrail_status_t symrail_seg_unpublish(const char *name)
{
    static const char fn[] = "symrail_seg_unpublish";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (!sr_seg_name_ok(fn, name))
        return SYMRAIL_ERR_INVALID;
    return sr_seg_unpublish(name);
}

symrail_status_t symrail_seg_lookup(int pe, const char *name, int timeout_ms,
                                    symrail_rseg_t *rseg_p)
{
    static const char fn[] = "symrail_seg_lookup";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if ((pe != SYMRAIL_ANY_PE && !sr_api_pe_ok(fn, pe)) || !sr_seg_name_ok(fn, name))
        return SYMRAIL_ERR_INVALID;
    if (rseg_p == NULL) {
        sr_error("%s: rseg_p is NULL", fn);
        return SYMRAIL_ERR_INVALID;
    }
    return sr_seg_lookup(pe, name, timeout_ms, rseg_p);
}
