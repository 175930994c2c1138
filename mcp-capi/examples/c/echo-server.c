/* echo-server: a stdio MCP server in C on a plain poll() loop, over mcp-capi
 *
 *     echo-server            (speaks MCP on stdin/stdout; logs to stderr)
 *
 * Tools:
 * - echo {text}: returns the text as text content; reports progress (1 of 1) first when the
 *   request carries a progress token;
 * - slow {steps?, step_ms?}: works `steps` steps (default 3) of `step_ms` ms (default 100),
 *   reporting progress as each starts when asked, then answers "done after N steps". The steps
 *   are driven by the poll loop's deadline, not by sleeping: a `cancelled` event stops the
 *   work and no response is sent.
 *
 * Both eras: the library answers `initialize` (2025-11-25 and older) and `server/discover`
 * (2026-07-28), and `tools/list` from the tools added here; a valid `tools/call` comes as a
 * `request` event. The loop: handle the library's events, run the work that is due, write
 * what the library has to send, then poll() stdin until the earliest deadline (the library's
 * and the work's), and feed in what came and the time. At the end of input, the calls in
 * flight are finished and answered; the library then says `closed` and the server exits.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcp.h"
#include "mini_json.h"

#define MAX_JOBS 64

/* One `slow` call in progress */
typedef struct {
    int used;
    uint64_t request;  /* the library's handle of the request */
    unsigned steps, done;
    uint64_t step_ms, next_ms;
    int wants_progress;
} job;

static job jobs[MAX_JOBS];
static int failed; /* a library call failed: the loop ends, exit status 1 */

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A library call's status: anything but MCP_OK is logged, and ends the server when `fatal` */
static void check_or(mcp_status status, const char *what, int fatal) {
    if (status != MCP_OK) {
        const char *why = mcp_last_error();
        fprintf(stderr, "echo-server: %s failed (%d): %s\n", what, (int)status, why ? why : "");
        if (fatal) failed = 1;
    }
}

static void check(mcp_status status, const char *what) { check_or(status, what, 1); }

/* Writes everything; 0, or -1 when stdout is gone */
static int write_all(const uint8_t *data, size_t len) {
    while (len > 0) {
        ssize_t n = write(STDOUT_FILENO, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Sends what the library has queued; -1 when stdout is closed */
static int flush(mcp_server *s) {
    const uint8_t *data;
    size_t len;
    while (mcp_server_poll_transmit(s, &data, &len) == MCP_OK) {
        if (write_all(data, len) != 0) return -1;
    }
    return 0;
}

static void respond_text(mcp_server *s, uint64_t now, uint64_t request, const char *text_json,
                         size_t text_len) {
    jbuf r = {0};
    jbuf_adds(&r, "{\"content\":[{\"type\":\"text\",\"text\":");
    jbuf_add(&r, text_json, text_len);
    jbuf_adds(&r, "}]}");
    if (r.failed) {
        check(mcp_server_respond_error(s, now, request, -32603, "out of memory", 13), "respond");
    } else {
        check(mcp_server_respond(s, now, request, r.p, r.len), "respond");
    }
    jbuf_free(&r);
}

static void respond_error(mcp_server *s, uint64_t now, uint64_t request, int64_t code,
                          const char *message) {
    check(mcp_server_respond_error(s, now, request, code, message, strlen(message)),
          "respond_error");
}

/* An integer argument in [lo, hi], or `dflt` when absent; -1 when present but invalid */
static int int_arg(json_span args, const char *name, uint64_t lo, uint64_t hi, uint64_t dflt,
                   uint64_t *out) {
    json_span v;
    if (json_get(args, name, &v) != 0) {
        *out = dflt;
        return 0;
    }
    double d;
    if (json_number(v, &d) != 0 || d != floor(d) || d < (double)lo || d > (double)hi) return -1;
    *out = (uint64_t)d;
    return 0;
}

/* A tools/call: the library has checked the name and the arguments against the tool's schema
 * (it answers an unknown tool or invalid arguments itself) and passes both in the event */
static void call_tool(mcp_server *s, uint64_t now, uint64_t request, json_span ev) {
    char name[128];
    json_span v, args = {"{}", 2};
    if (json_get(ev, "name", &v) != 0 || json_string(v, name, sizeof name) != 0) {
        respond_error(s, now, request, -32602, "tools/call needs a tool name");
        return;
    }
    if (json_get(ev, "arguments", &v) == 0) args = v;
    int wants_progress = json_get(ev, "wantsProgress", &v) == 0 && json_is(v, "true");

    if (strcmp(name, "echo") == 0) {
        json_span t;
        /* The text goes into the result as the JSON string it came as */
        if (json_get(args, "text", &t) != 0 || t.n < 2 || t.p[0] != '"' || !json_valid(t)) {
            respond_error(s, now, request, -32602, "echo needs a string argument `text`");
            return;
        }
        if (wants_progress) {
            check_or(mcp_server_progress(s, now, request, 1.0, 1.0, "echoing", 7), "progress", 0);
        }
        respond_text(s, now, request, t.p, t.n);
    } else if (strcmp(name, "slow") == 0) {
        uint64_t steps, step_ms;
        if (int_arg(args, "steps", 1, 1000, 3, &steps) != 0 ||
            int_arg(args, "step_ms", 0, 60000, 100, &step_ms) != 0) {
            respond_error(s, now, request, -32602,
                          "slow takes integers `steps` (1-1000) and `step_ms` (0-60000)");
            return;
        }
        for (int i = 0; i < MAX_JOBS; i++) {
            if (!jobs[i].used) {
                jobs[i] = (job){1, request, (unsigned)steps, 0, step_ms, now, wants_progress};
                fprintf(stderr, "echo-server: slow (request %" PRIu64 ") started: %u steps\n",
                        request, (unsigned)steps);
                return;
            }
        }
        respond_error(s, now, request, -32603, "too many slow calls at once");
    } else {
        respond_error(s, now, request, -32602, "unknown tool");
    }
}

/* One event of the library (a JSON object, copied: the library's text is only borrowed) */
static int handle_event(mcp_server *s, uint64_t now, const char *text, size_t len) {
    json_span ev = json_span_of(text, len), v;
    char kind[32] = "";
    uint64_t request = 0;
    if (json_get(ev, "kind", &v) != 0 || json_string(v, kind, sizeof kind) != 0) {
        fprintf(stderr, "echo-server: an event without a kind: %.*s\n", (int)len, text);
        return 0;
    }
    if (json_get(ev, "request", &v) == 0) json_u64(v, &request);

    if (strcmp(kind, "request") == 0) {
        char method[64] = "";
        if (json_get(ev, "method", &v) == 0) json_string(v, method, sizeof method);
        if (strcmp(method, "tools/call") == 0) {
            call_tool(s, now, request, ev);
        } else {
            respond_error(s, now, request, -32601, "method not found");
        }
    } else if (strcmp(kind, "cancelled") == 0) {
        for (int i = 0; i < MAX_JOBS; i++) {
            if (jobs[i].used && jobs[i].request == request) {
                jobs[i].used = 0;
                fprintf(stderr,
                        "echo-server: slow (request %" PRIu64
                        ") cancelled in step %u of %u; no response sent\n",
                        request, jobs[i].done, jobs[i].steps);
            }
        }
    } else if (strcmp(kind, "ready") == 0) {
        json_span version;
        char buf[32] = "?";
        if (json_get(ev, "protocolVersion", &version) == 0) json_string(version, buf, sizeof buf);
        fprintf(stderr, "echo-server: ready, protocol %s\n", buf);
    } else if (strcmp(kind, "closed") == 0) {
        char reason[256] = "";
        if (json_get(ev, "message", &v) == 0) json_string(v, reason, sizeof reason);
        fprintf(stderr, "echo-server: the session closed: %s\n", reason);
        return -1;
    }
    return 0;
}

/* The slow calls' steps that are due; the earliest next deadline (UINT64_MAX: none). A step
 * is reported as it starts, so the last report goes out a step ahead of the result. */
static uint64_t run_jobs(mcp_server *s, uint64_t now) {
    uint64_t next = UINT64_MAX;
    for (int i = 0; i < MAX_JOBS; i++) {
        job *j = &jobs[i];
        while (j->used && j->next_ms <= now) {
            if (j->done == j->steps) {
                char text[64];
                int n = snprintf(text, sizeof text, "\"done after %u steps\"", j->steps);
                respond_text(s, now, j->request, text, (size_t)n);
                j->used = 0;
                break;
            }
            j->done++;
            if (j->wants_progress) {
                char message[64];
                int n = snprintf(message, sizeof message, "step %u of %u", j->done, j->steps);
                check_or(mcp_server_progress(s, now, j->request, (double)j->done,
                                             (double)j->steps, message, (size_t)n),
                         "progress", 0);
            }
            j->next_ms += j->step_ms;
        }
        if (j->used && j->next_ms < next) next = j->next_ms;
    }
    return next;
}

static const char TOOL_ECHO[] =
    "{\"name\":\"echo\",\"description\":\"Echoes the text back (reports progress when asked)\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
    "\"required\":[\"text\"]}}";
static const char TOOL_SLOW[] =
    "{\"name\":\"slow\",\"description\":\"Works `steps` steps of `step_ms` milliseconds, "
    "reporting progress; cancellable\",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"steps\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000},"
    "\"step_ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":60000}}}}";
static const char CONFIG[] =
    "{\"name\":\"c-echo-server\",\"version\":\"0.1.0\",\"era\":\"both\"}";

int main(void) {
    signal(SIGPIPE, SIG_IGN); /* a closed stdout is a write error, not a signal */
    uint64_t now = now_ms();
    mcp_server *s = mcp_server_new(CONFIG, sizeof CONFIG - 1, now);
    if (s == NULL) {
        fprintf(stderr, "echo-server: mcp_server_new failed: %s\n", mcp_last_error());
        return 1;
    }
    check(mcp_server_add_tool(s, TOOL_ECHO, sizeof TOOL_ECHO - 1), "add_tool echo");
    check(mcp_server_add_tool(s, TOOL_SLOW, sizeof TOOL_SLOW - 1), "add_tool slow");

    jbuf event = {0};
    int eof = 0, closed = 0;
    while (!failed) {
        /* 1. Events (each may queue answers), the work that is due, and what to send */
        const char *json;
        size_t len;
        while (!closed && mcp_server_poll_event(s, &json, &len) == MCP_OK) {
            jbuf_clear(&event); /* a copy: the library's text lives until the next poll */
            jbuf_add(&event, json, len);
            if (event.failed || handle_event(s, now, event.p, event.len) != 0) closed = 1;
        }
        uint64_t deadline = run_jobs(s, now), lib;
        if (flush(s) != 0) {
            fprintf(stderr, "echo-server: stdout is closed\n");
            break;
        }
        if (closed || mcp_server_is_closed(s) != 0) break;
        /* 2. Wait for input (unless the library has enough for now) until the earliest
         * deadline, the library's or the work's */
        if (mcp_server_poll_timeout(s, &lib) == MCP_OK && lib < deadline) deadline = lib;
        int reading = !eof && mcp_server_wants_read(s) == 1;
        int timeout = -1;
        if (deadline != UINT64_MAX) {
            timeout = deadline <= now ? 0 : deadline - now > INT_MAX ? INT_MAX : (int)(deadline - now);
        } else if (!reading) {
            break; /* nothing to read and nothing to wait for: nothing can happen any more */
        }
        struct pollfd fds = {STDIN_FILENO, POLLIN, 0};
        int ready = poll(&fds, reading ? 1 : 0, timeout);
        if (ready < 0 && errno != EINTR) break;
        now = now_ms();
        /* 3. Feed in what came, and the time */
        if (reading && ready > 0) {
            uint8_t buf[65536];
            ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
            if (n > 0) {
                check(mcp_server_handle_bytes(s, now, buf, (size_t)n), "handle_bytes");
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                /* End of input: the work in flight is finished and answered, then the
                 * library says `closed` */
                check(mcp_server_handle_eof(s, now), "handle_eof");
                eof = 1;
            }
        }
        if (mcp_server_poll_timeout(s, &lib) == MCP_OK && lib <= now) {
            check(mcp_server_handle_timeout(s, now), "handle_timeout");
        }
    }
    for (int i = 0; i < MAX_JOBS; i++) {
        if (jobs[i].used) {
            fprintf(stderr, "echo-server: slow (request %" PRIu64 ") dropped unfinished\n",
                    jobs[i].request);
        }
    }
    fprintf(stderr, "echo-server: exiting\n");
    jbuf_free(&event);
    mcp_server_free(s);
    return failed;
}
