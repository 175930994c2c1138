/* mini_json: see mini_json.h */
#include "mini_json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static size_t skip_ws(const char *s, size_t n, size_t i) {
    while (i < n && is_ws(s[i])) i++;
    return i;
}

static int hex4(const char *s, size_t n, size_t i, unsigned *out) {
    unsigned v = 0;
    if (n < 4 || i > n - 4) return -1;
    for (size_t k = 0; k < 4; k++) {
        char c = s[i + k];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* A string starting at s[*i] == '"': moves *i past its closing quote */
static int skip_string(const char *s, size_t n, size_t *i) {
    size_t k = *i + 1;
    while (k < n) {
        unsigned char c = (unsigned char)s[k];
        if (c == '"') {
            *i = k + 1;
            return 0;
        }
        if (c < 0x20) return -1;
        if (c == '\\') {
            if (k + 1 >= n) return -1;
            char e = s[k + 1];
            if (e == 'u') {
                unsigned u;
                if (hex4(s, n, k + 2, &u) != 0) return -1;
                k += 6;
            } else if (strchr("\"\\/bfnrt", e) != NULL && e != '\0') {
                k += 2;
            } else {
                return -1;
            }
        } else {
            k++;
        }
    }
    return -1;
}

static int skip_number(const char *s, size_t n, size_t *i) {
    size_t k = *i;
    if (k < n && s[k] == '-') k++;
    if (k >= n) return -1;
    if (s[k] == '0') {
        k++;
    } else if (s[k] >= '1' && s[k] <= '9') {
        while (k < n && s[k] >= '0' && s[k] <= '9') k++;
    } else {
        return -1;
    }
    if (k < n && s[k] == '.') {
        k++;
        if (k >= n || s[k] < '0' || s[k] > '9') return -1;
        while (k < n && s[k] >= '0' && s[k] <= '9') k++;
    }
    if (k < n && (s[k] == 'e' || s[k] == 'E')) {
        k++;
        if (k < n && (s[k] == '+' || s[k] == '-')) k++;
        if (k >= n || s[k] < '0' || s[k] > '9') return -1;
        while (k < n && s[k] >= '0' && s[k] <= '9') k++;
    }
    *i = k;
    return 0;
}

/* One value starting at s[*i] (whitespace already skipped): moves *i past it */
static int skip_value(const char *s, size_t n, size_t *i, int depth) {
    if (*i >= n || depth > MINI_JSON_MAX_DEPTH) return -1;
    char c = s[*i];
    if (c == '"') return skip_string(s, n, i);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        size_t k = skip_ws(s, n, *i + 1);
        if (k < n && s[k] == close) {
            *i = k + 1;
            return 0;
        }
        for (;;) {
            if (c == '{') {
                if (k >= n || s[k] != '"' || skip_string(s, n, &k) != 0) return -1;
                k = skip_ws(s, n, k);
                if (k >= n || s[k] != ':') return -1;
                k = skip_ws(s, n, k + 1);
            }
            if (skip_value(s, n, &k, depth + 1) != 0) return -1;
            k = skip_ws(s, n, k);
            if (k >= n) return -1;
            if (s[k] == close) {
                *i = k + 1;
                return 0;
            }
            if (s[k] != ',') return -1;
            k = skip_ws(s, n, k + 1);
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) return skip_number(s, n, i);
    static const char *const literals[] = {"true", "false", "null"};
    for (size_t l = 0; l < 3; l++) {
        size_t len = strlen(literals[l]);
        if (n - *i >= len && memcmp(s + *i, literals[l], len) == 0) {
            *i += len;
            return 0;
        }
    }
    return -1;
}

json_span json_span_of(const char *s, size_t n) {
    json_span v = {s, n};
    if (s == NULL) {
        v.n = 0;
        return v;
    }
    while (v.n > 0 && is_ws(v.p[0])) {
        v.p++;
        v.n--;
    }
    while (v.n > 0 && is_ws(v.p[v.n - 1])) v.n--;
    return v;
}

int json_valid(json_span v) {
    size_t i = 0;
    if (v.p == NULL || skip_value(v.p, v.n, &i, 0) != 0) return 0;
    return skip_ws(v.p, v.n, i) == v.n;
}

/* Whether the string token s[i..end) (quotes included) decodes to key[0..klen) */
static int key_equals(const char *s, size_t i, size_t end, const char *key, size_t klen) {
    char buf[256];
    json_span tok = {s + i, end - i};
    if (klen >= sizeof buf) return 0;
    if (json_string(tok, buf, sizeof buf) != 0) return 0;
    return strlen(buf) == klen && memcmp(buf, key, klen) == 0;
}

/* The member `key[0..klen)` of the object `v` */
static int get_member(json_span v, const char *key, size_t klen, json_span *out) {
    const char *s = v.p;
    size_t n = v.n;
    size_t k = skip_ws(s, n, 0);
    if (s == NULL || k >= n || s[k] != '{') return -1;
    k = skip_ws(s, n, k + 1);
    if (k < n && s[k] == '}') return -1;
    for (;;) {
        size_t start = k;
        if (k >= n || s[k] != '"' || skip_string(s, n, &k) != 0) return -1;
        int match = key_equals(s, start, k, key, klen);
        k = skip_ws(s, n, k);
        if (k >= n || s[k] != ':') return -1;
        k = skip_ws(s, n, k + 1);
        size_t value = k;
        if (skip_value(s, n, &k, 1) != 0) return -1;
        if (match) {
            out->p = s + value;
            out->n = k - value;
            return 0;
        }
        k = skip_ws(s, n, k);
        if (k >= n || s[k] != ',') return -1;
        k = skip_ws(s, n, k + 1);
    }
}

int json_get(json_span v, const char *path, json_span *out) {
    json_span cur = v;
    if (path == NULL || out == NULL) return -1;
    for (;;) {
        const char *dot = strchr(path, '.');
        size_t klen = dot ? (size_t)(dot - path) : strlen(path);
        json_span next;
        if (get_member(cur, path, klen, &next) != 0) return -1;
        cur = next;
        if (dot == NULL) break;
        path = dot + 1;
    }
    *out = cur;
    return 0;
}

int json_array_next(json_span v, size_t *pos, json_span *elem) {
    const char *s = v.p;
    size_t n = v.n, k = *pos;
    if (s == NULL) return -1;
    if (k == 0) {
        k = skip_ws(s, n, 0);
        if (k >= n || s[k] != '[') return -1;
        k = skip_ws(s, n, k + 1);
        if (k < n && s[k] == ']') {
            *pos = k;
            return 0;
        }
    } else {
        /* *pos is just past the previous element */
        k = skip_ws(s, n, k);
        if (k >= n) return -1;
        if (s[k] == ']') return 0;
        if (s[k] != ',') return -1;
        k = skip_ws(s, n, k + 1);
    }
    size_t start = k;
    if (skip_value(s, n, &k, 1) != 0) return -1;
    elem->p = s + start;
    elem->n = k - start;
    *pos = k;
    return 1;
}

int json_is(json_span v, const char *text) {
    size_t len = strlen(text);
    return v.p != NULL && v.n == len && memcmp(v.p, text, len) == 0;
}

static int put(char *buf, size_t cap, size_t *len, unsigned char c) {
    if (*len + 1 >= cap) return -1;
    buf[(*len)++] = (char)c;
    return 0;
}

static int put_utf8(char *buf, size_t cap, size_t *len, unsigned long cp) {
    if (cp == 0) return -1;  /* a C string cannot hold it */
    if (cp < 0x80) return put(buf, cap, len, (unsigned char)cp);
    if (cp < 0x800) {
        return put(buf, cap, len, (unsigned char)(0xC0 | (cp >> 6))) ||
               put(buf, cap, len, (unsigned char)(0x80 | (cp & 0x3F)));
    }
    if (cp < 0x10000) {
        return put(buf, cap, len, (unsigned char)(0xE0 | (cp >> 12))) ||
               put(buf, cap, len, (unsigned char)(0x80 | ((cp >> 6) & 0x3F))) ||
               put(buf, cap, len, (unsigned char)(0x80 | (cp & 0x3F)));
    }
    return put(buf, cap, len, (unsigned char)(0xF0 | (cp >> 18))) ||
           put(buf, cap, len, (unsigned char)(0x80 | ((cp >> 12) & 0x3F))) ||
           put(buf, cap, len, (unsigned char)(0x80 | ((cp >> 6) & 0x3F))) ||
           put(buf, cap, len, (unsigned char)(0x80 | (cp & 0x3F)));
}

int json_string(json_span v, char *buf, size_t cap) {
    const char *s = v.p;
    size_t n = v.n, end = 0, len = 0;
    if (buf == NULL || cap == 0) return -1;
    buf[0] = '\0';
    if (s == NULL || n < 2 || s[0] != '"' || skip_string(s, n, &end) != 0 || end != n) return -1;
    for (size_t k = 1; k < n - 1;) {
        unsigned char c = (unsigned char)s[k];
        if (c != '\\') {
            if (c == 0 || put(buf, cap, &len, c) != 0) return -1;
            k++;
            continue;
        }
        char e = s[k + 1];
        unsigned char simple = 0;
        switch (e) {
            case '"': simple = '"'; break;
            case '\\': simple = '\\'; break;
            case '/': simple = '/'; break;
            case 'b': simple = '\b'; break;
            case 'f': simple = '\f'; break;
            case 'n': simple = '\n'; break;
            case 'r': simple = '\r'; break;
            case 't': simple = '\t'; break;
            default: break;
        }
        if (simple) {
            if (put(buf, cap, &len, simple) != 0) return -1;
            k += 2;
            continue;
        }
        /* \uXXXX, a surrogate pair for what lies beyond the basic plane */
        unsigned hi, lo;
        if (hex4(s, n, k + 2, &hi) != 0) return -1;
        k += 6;
        unsigned long cp = hi;
        if (hi >= 0xD800 && hi <= 0xDBFF) {
            if (k + 1 < n && s[k] == '\\' && s[k + 1] == 'u' && hex4(s, n, k + 2, &lo) == 0 &&
                lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + (((unsigned long)hi - 0xD800) << 10) + (lo - 0xDC00);
                k += 6;
            } else {
                cp = 0xFFFD;  /* a lone surrogate: the replacement character */
            }
        } else if (hi >= 0xDC00 && hi <= 0xDFFF) {
            cp = 0xFFFD;
        }
        if (put_utf8(buf, cap, &len, cp) != 0) return -1;
    }
    buf[len] = '\0';
    return 0;
}

int json_number(json_span v, double *out) {
    char buf[64];
    size_t end = 0;
    if (v.p == NULL || v.n == 0 || v.n >= sizeof buf) return -1;
    if (skip_number(v.p, v.n, &end) != 0 || end != v.n) return -1;
    memcpy(buf, v.p, v.n);
    buf[v.n] = '\0';
    errno = 0;
    double d = strtod(buf, NULL);
    if (errno == ERANGE && isinf(d)) return -1;
    *out = d;
    return 0;
}

int json_u64(json_span v, uint64_t *out) {
    uint64_t x = 0;
    if (v.p == NULL || v.n == 0 || v.n > 20) return -1;
    if (v.n > 1 && v.p[0] == '0') return -1;
    for (size_t k = 0; k < v.n; k++) {
        char c = v.p[k];
        if (c < '0' || c > '9') return -1;
        uint64_t d = (uint64_t)(c - '0');
        if (x > (UINT64_MAX - d) / 10) return -1;
        x = x * 10 + d;
    }
    *out = x;
    return 0;
}

static int jbuf_reserve(jbuf *b, size_t more) {
    if (b->failed) return -1;
    if (more > SIZE_MAX - b->len - 1) {
        b->failed = 1;
        return -1;
    }
    size_t need = b->len + more + 1;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->p, cap);
    if (p == NULL) {
        b->failed = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void jbuf_add(jbuf *b, const char *s, size_t n) {
    if (n == 0 || jbuf_reserve(b, n) != 0) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void jbuf_adds(jbuf *b, const char *s) { jbuf_add(b, s, strlen(s)); }

void jbuf_addf(jbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0 || jbuf_reserve(b, (size_t)n) != 0) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void jbuf_add_string(jbuf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    jbuf_add(b, "\"", 1);
    size_t run = 0; /* bytes copied as they are, pending */
    for (size_t k = 0; k < n; k++) {
        unsigned char c = (unsigned char)s[k];
        char esc[7];
        size_t elen = 0;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            elen = 2;
        } else if (c == '\n') {
            memcpy(esc, "\\n", 2);
            elen = 2;
        } else if (c == '\r') {
            memcpy(esc, "\\r", 2);
            elen = 2;
        } else if (c == '\t') {
            memcpy(esc, "\\t", 2);
            elen = 2;
        } else if (c < 0x20 || c == 0x7F) {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            elen = 6;
        }
        if (elen) {
            jbuf_add(b, s + k - run, run);
            run = 0;
            jbuf_add(b, esc, elen);
        } else {
            run++;
        }
    }
    jbuf_add(b, s + n - run, run);
    jbuf_add(b, "\"", 1);
}

void jbuf_add_json(jbuf *b, json_span v) {
    if (!json_valid(v)) {
        jbuf_add(b, "null", 4);
        return;
    }
    size_t k = 0;
    while (k < v.n) {
        size_t start = k;
        if (v.p[k] == '"') {
            skip_string(v.p, v.n, &k); /* well-formed: json_valid said so */
            jbuf_add(b, v.p + start, k - start);
        } else if (is_ws(v.p[k])) {
            k++;
        } else {
            jbuf_add(b, v.p + k, 1);
            k++;
        }
    }
}

void jbuf_clear(jbuf *b) {
    b->len = 0;
    b->failed = 0;
    if (b->p) b->p[0] = '\0';
}

void jbuf_free(jbuf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}
