/* Per-layer counters.
 *
 * Each layer lists its counters once as an X-macro; the same list declares
 * the struct fields and the names printed by `nstack stats`, so a counter
 * cannot be added without showing up in the output. Counters are plain
 * uint64_t: only the stack thread writes them.
 */
#ifndef NS_CORE_COUNTERS_H
#define NS_CORE_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "nstack/types.h"

#define NS_CTR_FIELD(name) uint64_t name;
#define NS_CTR_NAME(name)  #name,

/* struct ns_ctr_group (nstack/types.h) is a named group of counters as
 * laid out by an X-macro list. */

/* Groups are handed to callers, so their names live in a file-scope table
 * (NS_CTR_NAMES), never in a compound literal inside a function. */
#define NS_CTR_NAMES(var, list) static const char *const var[] = {list(NS_CTR_NAME)}
#define NS_CTR_GROUP_NAMED(gname, names, ptr)                                                      \
    ((struct ns_ctr_group){gname, names, (const uint64_t *)(ptr),                                  \
                           sizeof(*(ptr)) / sizeof(uint64_t)})

#endif
