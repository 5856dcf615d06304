/* Text helpers shared by the CLI, the daemon and simdemo: a growable string
 * buffer, escaping for JSON and for printing untrusted bytes, and strict
 * parsing of numeric command arguments (no sign, no junk, explicit range),
 * so a typo is reported instead of silently becoming 0. */
#ifndef NS_TOOLS_TEXT_H
#define NS_TOOLS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A NUL-terminated growable string. On allocation failure `oom` is set and
 * further appends are ignored, so callers check once at the end. */
struct ns_sbuf {
    char *s;
    size_t len, cap;
    bool oom;
};

void ns_sbuf_init(struct ns_sbuf *b);
void ns_sbuf_free(struct ns_sbuf *b);
void ns_sbuf_reset(struct ns_sbuf *b);
void ns_sbuf_add(struct ns_sbuf *b, const void *data, size_t n);
void ns_sbuf_puts(struct ns_sbuf *b, const char *s);
void ns_sbuf_printf(struct ns_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The string, "" when empty. */
static inline const char *ns_sbuf_str(const struct ns_sbuf *b)
{
    return b->s ? b->s : "";
}
/* s as a quoted JSON string. */
void ns_sbuf_json_str(struct ns_sbuf *b, const char *s);
/* Bytes as printable ASCII: \\ \n \r \t, other non-printables as \xHH. */
void ns_sbuf_escape(struct ns_sbuf *b, const uint8_t *data, size_t n);

/* Decimal, or hexadecimal with 0x; inside [min, max]. */
bool ns_arg_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);
/* Seconds as "2", "0.2", ".5" (up to microseconds; further digits are
 * truncated) into microseconds; at most 1e6 seconds. */
bool ns_arg_seconds(const char *s, uint64_t *us);
/* A UDP port, 1-65535. */
bool ns_arg_port(const char *s, uint16_t *port);

#endif
