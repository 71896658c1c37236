#include "config.h"
#include "util/strlist.h"

#include <string.h>

static int sr_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int sr_list_next(const char **pos_p, const char **item_p, size_t *len_p)
{
    const char *p = *pos_p;
    for (;;) {
        while (sr_blank(*p) || *p == ',')
            p++;
        if (*p == '\0') {
            *pos_p = p;
            return 0;
        }
        const char *start = p;
        while (*p && *p != ',')
            p++;
        const char *end = p;
        while (end > start && sr_blank(end[-1]))
            end--;
        *pos_p = p;
        if (end > start) {
            *item_p = start;
            *len_p = (size_t)(end - start);
            return 1;
        }
    }
}

int sr_list_item_is(const char *item, size_t len, const char *name)
{
    return strlen(name) == len && strncmp(item, name, len) == 0;
}

int sr_list_has(const char *list, const char *name)
{
    const char *pos = list, *item;
    size_t len;
    while (sr_list_next(&pos, &item, &len))
        if (sr_list_item_is(item, len, name))
            return 1;
    return 0;
}
