/*
 * Comma lists in configuration values (SYMRAIL_TRANSPORTS, SYMRAIL_IB_DEVICES,
 * SYMRAIL_TCP_IF, PMIx peer lists): one set of rules everywhere.  Items are
 * separated by commas, blanks around an item do not count, and empty items
 * are skipped.
 */
#ifndef SR_UTIL_STRLIST_H
#define SR_UTIL_STRLIST_H

#include <stddef.h>

/* The next item of the list at *pos_p: its start and length, and *pos_p
 * moves past it.  0 when the list is exhausted. */
int sr_list_next(const char **pos_p, const char **item_p, size_t *len_p);
/* Is `name` one of the items? */
int sr_list_has(const char *list, const char *name);
/* Does the item (start, len) spell `name`? */
int sr_list_item_is(const char *item, size_t len, const char *name);

#endif
