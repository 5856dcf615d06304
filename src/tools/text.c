/* Text helpers for the tools (see text.h). */
#include "tools/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ns_sbuf_init(struct ns_sbuf *b)
{
    b->s = NULL;
    b->len = b->cap = 0;
    b->oom = false;
}

void ns_sbuf_free(struct ns_sbuf *b)
{
    free(b->s);
    ns_sbuf_init(b);
}

void ns_sbuf_reset(struct ns_sbuf *b)
{
    b->len = 0;
    if (b->s)
        b->s[0] = '\0';
}

static bool reserve(struct ns_sbuf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = true;
        return false;
    }
    b->s = s;
    b->cap = cap;
    return true;
}

void ns_sbuf_add(struct ns_sbuf *b, const void *data, size_t n)
{
    if (n == 0)
        return;
    if (!reserve(b, n))
        return;
    memcpy(b->s + b->len, data, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void ns_sbuf_puts(struct ns_sbuf *b, const char *s)
{
    ns_sbuf_add(b, s, strlen(s));
}

void ns_sbuf_printf(struct ns_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void ns_sbuf_json_str(struct ns_sbuf *b, const char *s)
{
    ns_sbuf_add(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            ns_sbuf_add(b, "\\\"", 2);
            break;
        case '\\':
            ns_sbuf_add(b, "\\\\", 2);
            break;
        case '\n':
            ns_sbuf_add(b, "\\n", 2);
            break;
        case '\t':
            ns_sbuf_add(b, "\\t", 2);
            break;
        default:
            if (*p < 0x20)
                ns_sbuf_printf(b, "\\u%04x", *p);
            else
                ns_sbuf_add(b, p, 1);
        }
    }
    ns_sbuf_add(b, "\"", 1);
}

void ns_sbuf_escape(struct ns_sbuf *b, const uint8_t *data, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t c = data[i];
        switch (c) {
        case '\\':
            ns_sbuf_add(b, "\\\\", 2);
            break;
        case '\n':
            ns_sbuf_add(b, "\\n", 2);
            break;
        case '\r':
            ns_sbuf_add(b, "\\r", 2);
            break;
        case '\t':
            ns_sbuf_add(b, "\\t", 2);
            break;
        default:
            if (c >= 0x20 && c < 0x7f)
                ns_sbuf_add(b, &c, 1);
            else
                ns_sbuf_printf(b, "\\x%02x", c);
        }
    }
}

bool ns_arg_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    if (!s || !*s)
        return false;
    unsigned base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        if (!*s)
            return false;
    }
    uint64_t v = 0;
    for (; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            return false;
        v = v * base + d;
        if (v > UINT32_MAX)
            return false;
    }
    if (v < min || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}

bool ns_arg_seconds(const char *s, uint64_t *us)
{
    if (!s || !*s)
        return false;
    uint64_t whole = 0, frac = 0;
    bool digits = false;
    for (; *s >= '0' && *s <= '9'; s++) {
        whole = whole * 10 + (uint64_t)(*s - '0');
        digits = true;
        if (whole > 1000000)
            return false;
    }
    if (*s == '.') {
        s++;
        uint64_t scale = 100000;
        for (; *s >= '0' && *s <= '9'; s++) {
            frac += (uint64_t)(*s - '0') * scale;
            scale /= 10;
            digits = true;
        }
    }
    if (*s || !digits)
        return false;
    uint64_t v = whole * 1000000 + frac;
    if (v > 1000000ULL * 1000000)
        return false;
    *us = v;
    return true;
}

bool ns_arg_port(const char *s, uint16_t *port)
{
    uint32_t v;
    if (!ns_arg_u32(s, 1, 65535, &v))
        return false;
    *port = (uint16_t)v;
    return true;
}
