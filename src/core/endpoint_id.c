/*
 * Who a process is, for independent jobs (endpoint.h) and segment
 * descriptors (region.c): the hash of its job's name, and of its host
 * (name, boot and PID namespace), so that two ends tell whether they are
 * the same job and whether they share a host.
 */
#include "config.h"
#include "core/endpoint.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

uint64_t sr_job_hash(void)
{
    const char *job = sr_boot_info(sr_rt.boot)->job;
    uint64_t h = UINT64_C(1469598103934665603);
    for (; *job; job++)
        h = (h ^ (unsigned char)*job) * UINT64_C(1099511628211);
    return h;
}

uint64_t sr_ep_host_hash(void)
{
    char id[512] = "";
    snprintf(id, sizeof(id), "%s/", sr_boot_info(sr_rt.boot)->host);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        size_t n = strlen(id);
        if (fgets(id + n, (int)(sizeof(id) - n), f) == NULL)
            id[n] = '\0';
        fclose(f);
    }
    /* Process ids (liveness, cross-memory attach) mean the same only in one
     * PID namespace: a container with its own is another host here. */
    size_t n = strlen(id);
    ssize_t k = readlink("/proc/self/ns/pid", id + n, sizeof(id) - n - 1);
    id[n + (k > 0 ? (size_t)k : 0)] = '\0';
    uint64_t h = UINT64_C(1469598103934665603);
    for (const char *p = id; *p; p++)
        h = (h ^ (unsigned char)*p) * UINT64_C(1099511628211);
    return h;
}
