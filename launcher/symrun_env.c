/* The ranks' environment and the program they run. */
#define _GNU_SOURCE

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "symrun.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- environment arrays ------------------------------------------------
 * PMIx_server_setup_fork edits the array with realloc and free, so every
 * array handed to it, and every string in it, must come from malloc. */

void sr_symrun_env_free(char **env)
{
    if (env == NULL)
        return;
    for (char **e = env; *e != NULL; e++)
        free(*e);
    free(env);
}

int sr_symrun_env_dup(char *const *src, char ***env_p)
{
    size_t n = 0;
    char **env;

    while (src != NULL && src[n] != NULL)
        n++;
    env = calloc(n + 1, sizeof(*env));
    if (env == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        env[i] = strdup(src[i]);
        if (env[i] == NULL) {
            sr_symrun_env_free(env);
            return -1;
        }
    }
    *env_p = env;
    return 0;
}

static char **sr_symrun_env_find(char **env, const char *name, size_t namelen)
{
    for (char **e = env; *e != NULL; e++) {
        if (strncmp(*e, name, namelen) == 0 && (*e)[namelen] == '=')
            return e;
    }
    return NULL;
}

const char *sr_symrun_env_get(char **env, const char *name)
{
    char **e = sr_symrun_env_find(env, name, strlen(name));

    return e != NULL ? *e + strlen(name) + 1 : NULL;
}

static int sr_symrun_env_set(char ***env_p, const char *name, size_t namelen,
                             const char *value)
{
    char **slot = sr_symrun_env_find(*env_p, name, namelen);
    char *entry;

    if (asprintf(&entry, "%.*s=%s", (int)namelen, name, value) < 0)
        return -1;
    if (slot != NULL) {
        free(*slot);
        *slot = entry;
        return 0;
    }

    size_t n = 0;
    char **env;

    while ((*env_p)[n] != NULL)
        n++;
    env = realloc(*env_p, (n + 2) * sizeof(*env));
    if (env == NULL) {
        free(entry);
        return -1;
    }
    env[n] = entry;
    env[n + 1] = NULL;
    *env_p = env;
    return 0;
}

static int sr_symrun_make_secret(char *hex, size_t hexlen)
{
    unsigned char raw[SR_SYMRUN_SECRET_BYTES];
    size_t got = 0;

    if (hexlen < 2 * sizeof(raw) + 1)
        return -1;
    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

/* The ranks' environment before PMIx adds its per-rank part: ours, then
 * -x settings, then the job secret unless the user chose one. */
int sr_symrun_build_env(sr_symrun_job_t *job)
{
    char secret[2 * SR_SYMRUN_SECRET_BYTES + 1];
    char **env;

    if (sr_symrun_env_dup(environ, &env) != 0)
        goto err_nomem;

    for (int i = 0; i < job->args.nexports; i++) {
        const char *spec = job->args.exports[i];
        const char *eq = strchr(spec, '=');

        if (eq != NULL) {
            if (sr_symrun_env_set(&env, spec, (size_t)(eq - spec), eq + 1) != 0)
                goto err_env;
        } else {
            const char *val = getenv(spec);

            if (val == NULL) {
                fprintf(stderr, "symrun: warning: -x %s: not set in the "
                        "environment\n", spec);
                continue;
            }
            if (sr_symrun_env_set(&env, spec, strlen(spec), val) != 0)
                goto err_env;
        }
    }

    if (sr_symrun_env_get(env, SR_SYMRUN_SECRET_ENV) == NULL) {
        if (sr_symrun_make_secret(secret, sizeof(secret)) != 0) {
            fprintf(stderr, "symrun: cannot generate the job secret: %s\n",
                    strerror(errno));
            sr_symrun_env_free(env);
            return -1;
        }
        if (sr_symrun_env_set(&env, SR_SYMRUN_SECRET_ENV,
                              strlen(SR_SYMRUN_SECRET_ENV), secret) != 0)
            goto err_env;
    }

    job->base_env = env;
    return 0;

err_env:
    sr_symrun_env_free(env);
err_nomem:
    fprintf(stderr, "symrun: out of memory\n");
    return -1;
}

/*
 * Resolves prog the way execvp would, but before anything starts, so that
 * a typo costs no PMIx server and yields one clear message. Returns 0 or
 * an errno value.
 */
int sr_symrun_find_prog(const char *prog, const char *path,
                               char **resolved_p)
{
    int result = ENOENT;
    const char *p;

    if (prog[0] == '\0')
        return ENOENT;
    if (strchr(prog, '/') != NULL) {
        struct stat st;

        if (stat(prog, &st) != 0)
            return errno;
        if (S_ISDIR(st.st_mode))
            return EACCES;
        if (access(prog, X_OK) != 0)
            return errno;
        *resolved_p = strdup(prog);
        return *resolved_p != NULL ? 0 : ENOMEM;
    }

    if (path == NULL)
        path = "/bin:/usr/bin";
    p = path;
    for (;;) {
        const char *end = strchrnul(p, ':');
        size_t dlen = (size_t)(end - p);
        char *cand;
        struct stat st;

        /* An empty PATH element means the current directory. */
        if (asprintf(&cand, "%.*s%s%s", (int)dlen, p, dlen > 0 ? "/" : "",
                     prog) < 0)
            return ENOMEM;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(cand, X_OK) == 0) {
                *resolved_p = cand;
                return 0;
            }
            result = EACCES;
        }
        free(cand);
        if (*end == '\0')
            break;
        p = end + 1;
    }
    return result;
}

