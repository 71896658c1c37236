/* symrail-info: what this build of symrail contains and how it is configured. */
#include "config.h"
#include "tl/tl.h"
#include "util/env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <symrail.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: symrail-info [--version | --env | --rails | --help]\n"
                 "  prints the version, build options, transports and SYMRAIL_* variables;\n"
                 "  --rails: the RDMA rails found and the choice for this process\n");
}

int main(int argc, char **argv)
{
    int only_env = 0, rails = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("symrail %s\n", symrail_version_string());
            return 0;
        } else if (strcmp(argv[i], "--env") == 0) {
            only_env = 1;
        } else if (strcmp(argv[i], "--rails") == 0) {
            rails = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "symrail-info: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (rails) {
        sr_env_t env;
        if (sr_env_load(getenv, &env) != SYMRAIL_OK)
            return 1;
        printf("RDMA rails (SYMRAIL_IB_DEVICES='%s'):\n", env.ib_devices);
        sr_tl_verbs_rails_report(stdout, &env);
        sr_env_release(&env);
        return 0;
    }
    if (!only_env) {
        printf("symrail %s\n", symrail_version_string());
        printf("build:\n  cflags     %s\n  prefix     %s\n", SR_BUILD_CFLAGS, SR_PREFIX);
        printf("transports compiled in:");
        for (size_t i = 0; i < sr_tl_nall; i++)
            printf(" %s", sr_tl_all[i]->name);
        printf("\nnotification payload: up to %d bytes\n", SYMRAIL_NOTIFY_MAX_PAYLOAD);
        printf("environment (value in effect where set):\n");
    }
    sr_env_print(stdout, getenv);
    return 0;
}
