/* mini_json: just enough JSON for the C examples of mcp-capi (not a general library)
 *
 * Reading: the events the library hands out are JSON objects; these functions find a member
 * by a dotted path ("params._meta.progressToken") and read a string, a number or the raw text
 * of any value. Every function checks bounds and nesting (at most MINI_JSON_MAX_DEPTH levels)
 * and fails with -1 on text that is not JSON; nothing here crashes on bad input.
 *
 * Writing: a growable buffer (`jbuf`) that appends raw text, printf-formatted text and
 * escaped JSON strings. On allocation failure the buffer is marked failed and stays usable.
 *
 * Licensed like the repository (MIT OR Apache-2.0).
 */
#ifndef MINI_JSON_H
#define MINI_JSON_H

#include <stddef.h>
#include <stdint.h>

#define MINI_JSON_MAX_DEPTH 64

/* The text of one JSON value: `p[0..n)` (not NUL-terminated) */
typedef struct {
    const char *p;
    size_t n;
} json_span;

/* The whole text `s` of length `n` as a span, its surrounding whitespace trimmed */
json_span json_span_of(const char *s, size_t n);

/* Whether `v` is one complete, well-formed JSON value (nothing after it) */
int json_valid(json_span v);

/* The value at `path` in the object `v`: member names separated by '.', each looked up among
 * the members of the object before it. 0 and `*out` set when found; -1 when `v` is not an
 * object, a member is missing, or the text is malformed. */
int json_get(json_span v, const char *path, json_span *out);

/* The elements of the array `v`, one by one: start with `*pos = 0`; each call sets `*elem` to
 * the next element and returns 1, or returns 0 at the end and -1 when `v` is not an array or
 * is malformed */
int json_array_next(json_span v, size_t *pos, json_span *elem);

/* Whether `v` is exactly the literal or number text `text` ("true", "null", ...) */
int json_is(json_span v, const char *text);

/* `v` decoded as a JSON string into `buf` (UTF-8, NUL-terminated, at most cap - 1 bytes).
 * 0 on success; -1 when `v` is not a string, has a bad escape, holds a NUL (\u0000) or does
 * not fit. */
int json_string(json_span v, char *buf, size_t cap);

/* `v` as a number: 0 and `*out` set, or -1 when `v` is not a JSON number */
int json_number(json_span v, double *out);

/* `v` as a non-negative integer that fits in uint64_t: 0 and `*out` set, or -1 */
int json_u64(json_span v, uint64_t *out);

/* A growable output buffer; zero-initialise it (`jbuf b = {0};`), free it with jbuf_free */
typedef struct {
    char *p;     /* NUL-terminated when len > 0 */
    size_t len;
    size_t cap;
    int failed;  /* an allocation failed: the content is incomplete */
} jbuf;

void jbuf_add(jbuf *b, const char *s, size_t n);
void jbuf_adds(jbuf *b, const char *s);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void jbuf_addf(jbuf *b, const char *fmt, ...);
/* Appends `s[0..n)` as a quoted JSON string, escaping quotes, backslashes and control
 * characters (the bytes are passed through otherwise: give it UTF-8) */
void jbuf_add_string(jbuf *b, const char *s, size_t n);
/* Appends the JSON value `v` without the whitespace between its tokens (so on one line);
 * appends `null` when `v` is not well-formed JSON */
void jbuf_add_json(jbuf *b, json_span v);
void jbuf_clear(jbuf *b);
void jbuf_free(jbuf *b);

#endif
