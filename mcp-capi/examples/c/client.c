/* client: an MCP client in C on a plain poll() loop, over mcp-capi
 *
 *     client [OPTIONS] [--] COMMAND [ARGS...]
 *
 * Starts COMMAND as a child process, speaks MCP with it over its stdin and stdout, lists its
 * tools and calls one, printing each result as a JSON line on stdout:
 *
 *     {"step":"ready","protocolVersion":"...","serverInfo":{...}}
 *     {"step":"tools/list","tools":["echo",...],"result":{...}}
 *     {"step":"progress","progress":1,"total":3,"message":"..."}     (when the server reports)
 *     {"step":"tools/call","tool":"echo","result":{...}}
 *
 * The library asks for progress on every request, so a tool that reports it is seen.
 *
 * Exits 0 when the call succeeded, 1 with a message on stderr when anything failed (the
 * server did not start or closed, a request failed, the tool answered isError), and 2 when
 * the whole run took longer than --timeout-ms. It never waits past that deadline: the loop
 * polls until the earliest of the library's deadline and its own. Then it stops the server
 * as the stdio transport says (close its input; after 2 s SIGTERM; after 1 s more SIGKILL),
 * so it ends at most 3 s after the deadline whatever the server does.
 *
 * Options:
 *   --protocol VERSION   2025-11-25 (the initialize handshake) or 2026-07-28 (stateless)
 *   --tool NAME          the tool to call (default: echo when listed, else the first tool)
 *   --text TEXT          echo's `text` argument (default "hello from c")
 *   --arguments JSON     the call's arguments, a JSON object (default: {"text": TEXT} for
 *                        echo, {} otherwise)
 *   --timeout-ms N       the overall deadline (default 30000)
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mcp.h"
#include "mini_json.h"

extern char **environ;

enum phase { WAIT_READY, LISTING, CALLING, DONE };

typedef struct {
    const char *protocol, *tool, *text, *arguments;
    uint64_t timeout_ms;
    char **command;
} options;

typedef struct {
    options opt;
    mcp_client *c;
    enum phase phase;
    uint64_t pending;   /* the request awaited */
    char tool[256];     /* the tool called */
    int exit_code;      /* set with `phase = DONE` */
    jbuf out;           /* the line being printed */
} run;

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void fail(run *r, int code, const char *fmt, ...) {
    va_list ap;
    fputs("client: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    r->phase = DONE;
    r->exit_code = code;
}

/* A library call's status: 0 when MCP_OK, else the run fails with the library's message */
static int check(run *r, mcp_status status, const char *what) {
    if (status == MCP_OK) return 0;
    const char *why = mcp_last_error();
    fail(r, 1, "%s failed (%d): %s", what, (int)status, why ? why : "");
    return -1;
}

static void print_line(run *r) {
    if (r->out.failed) {
        fail(r, 1, "out of memory");
    } else {
        fwrite(r->out.p, 1, r->out.len, stdout);
        fputc('\n', stdout);
        fflush(stdout);
    }
    jbuf_clear(&r->out);
}

static void request(run *r, uint64_t now, const char *method, const char *params, size_t plen) {
    check(r, mcp_client_request(r->c, now, method, strlen(method), params, plen, &r->pending),
          method);
}

/* The tools/list result came: print it, choose the tool, call it */
static void listed(run *r, uint64_t now, json_span result) {
    json_span tools, tool, name;
    size_t pos = 0;
    int has_echo = 0, found = 0, more;
    char first[256] = "", buf[256];
    if (json_get(result, "tools", &tools) != 0) {
        fail(r, 1, "tools/list: the result has no tools");
        return;
    }
    jbuf_adds(&r->out, "{\"step\":\"tools/list\",\"tools\":[");
    while ((more = json_array_next(tools, &pos, &tool)) == 1) {
        if (json_get(tool, "name", &name) != 0 || json_string(name, buf, sizeof buf) != 0) {
            continue;
        }
        if (first[0] == '\0') {
            memcpy(first, buf, sizeof first);
        } else {
            jbuf_adds(&r->out, ",");
        }
        jbuf_add_string(&r->out, buf, strlen(buf));
        if (strcmp(buf, "echo") == 0) has_echo = 1;
        if (r->opt.tool && strcmp(buf, r->opt.tool) == 0) found = 1;
    }
    jbuf_adds(&r->out, "],\"result\":");
    jbuf_add_json(&r->out, result);
    jbuf_adds(&r->out, "}");
    print_line(r);
    if (more < 0) {
        fail(r, 1, "tools/list: `tools` is not an array");
        return;
    }
    if (r->opt.tool && !found) {
        fail(r, 1, "the server has no tool %s", r->opt.tool);
        return;
    }
    const char *chosen = r->opt.tool ? r->opt.tool : has_echo ? "echo" : first;
    if (chosen[0] == '\0') {
        fail(r, 1, "the server lists no tools");
        return;
    }
    snprintf(r->tool, sizeof r->tool, "%s", chosen);

    jbuf params = {0};
    jbuf_adds(&params, "{\"name\":");
    jbuf_add_string(&params, r->tool, strlen(r->tool));
    jbuf_adds(&params, ",\"arguments\":");
    if (r->opt.arguments) {
        jbuf_adds(&params, r->opt.arguments);
    } else if (strcmp(r->tool, "echo") == 0) {
        jbuf_adds(&params, "{\"text\":");
        jbuf_add_string(&params, r->opt.text, strlen(r->opt.text));
        jbuf_adds(&params, "}");
    } else {
        jbuf_adds(&params, "{}");
    }
    jbuf_adds(&params, "}");
    if (params.failed) {
        fail(r, 1, "out of memory");
    } else {
        request(r, now, "tools/call", params.p, params.len);
        r->phase = CALLING;
    }
    jbuf_free(&params);
}

/* One event of the library */
static void handle_event(run *r, uint64_t now, json_span ev) {
    json_span v, result, error;
    char kind[32] = "";
    uint64_t id = 0;
    if (json_get(ev, "kind", &v) != 0 || json_string(v, kind, sizeof kind) != 0) {
        fail(r, 1, "an event without a kind: %.*s", (int)ev.n, ev.p);
        return;
    }
    if (json_get(ev, "request", &v) == 0) json_u64(v, &id);

    if (strcmp(kind, "ready") == 0 && r->phase == WAIT_READY) {
        jbuf_adds(&r->out, "{\"step\":\"ready\",\"protocolVersion\":");
        jbuf_add_json(&r->out, json_get(ev, "protocolVersion", &v) == 0 ? v : (json_span){"null", 4});
        jbuf_adds(&r->out, ",\"serverInfo\":");
        jbuf_add_json(&r->out, json_get(ev, "serverInfo", &v) == 0 ? v : (json_span){"null", 4});
        jbuf_adds(&r->out, "}");
        print_line(r);
        request(r, now, "tools/list", NULL, 0);
        r->phase = LISTING;
    } else if (strcmp(kind, "response") == 0 && id == r->pending &&
               (r->phase == LISTING || r->phase == CALLING)) {
        if (json_get(ev, "error", &error) == 0) {
            jbuf e = {0};
            jbuf_add_json(&e, error);
            fail(r, 1, "%s failed: %s", r->phase == LISTING ? "tools/list" : "tools/call",
                 e.p ? e.p : "");
            jbuf_free(&e);
        } else if (json_get(ev, "result", &result) != 0) {
            fail(r, 1, "a response with neither result nor error");
        } else if (r->phase == LISTING) {
            listed(r, now, result);
        } else {
            jbuf_adds(&r->out, "{\"step\":\"tools/call\",\"tool\":");
            jbuf_add_string(&r->out, r->tool, strlen(r->tool));
            jbuf_adds(&r->out, ",\"result\":");
            jbuf_add_json(&r->out, result);
            jbuf_adds(&r->out, "}");
            print_line(r);
            if (json_get(result, "isError", &v) == 0 && json_is(v, "true")) {
                fail(r, 1, "the tool %s answered isError", r->tool);
            } else {
                r->phase = DONE;
                r->exit_code = 0;
            }
        }
    } else if (strcmp(kind, "progress") == 0) {
        jbuf_adds(&r->out, "{\"step\":\"progress\"");
        static const char *const keys[] = {"progress", "total", "message"};
        for (size_t k = 0; k < 3; k++) {
            if (json_get(ev, keys[k], &v) == 0) {
                jbuf_addf(&r->out, ",\"%s\":", keys[k]);
                jbuf_add_json(&r->out, v);
            }
        }
        jbuf_adds(&r->out, "}");
        print_line(r);
    } else if (strcmp(kind, "request") == 0) {
        /* The server asks something (sampling, elicitation, roots): this client offers none */
        static const char msg[] = "this client handles no requests";
        check(r, mcp_client_respond_error(r->c, now, id, -32601, msg, sizeof msg - 1),
              "respond_error");
    } else if (strcmp(kind, "closed") == 0) {
        char reason[256] = "";
        if (json_get(ev, "message", &v) == 0) json_string(v, reason, sizeof reason);
        if (r->phase != DONE) fail(r, 1, "the session closed: %s", reason);
    }
}

static int write_all(int fd, const uint8_t *data, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Starts the server with its stdin and stdout on pipes; its stderr is ours */
static pid_t spawn(char **command, int *to_child, int *from_child) {
    int in[2], out[2];
    if (pipe(in) != 0) return -1;
    if (pipe(out) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    /* Our ends must not leak into the child */
    fcntl(in[1], F_SETFD, FD_CLOEXEC);
    fcntl(out[0], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, in[0]);
    posix_spawn_file_actions_addclose(&actions, out[1]);
    pid_t pid;
    int err = posix_spawnp(&pid, command[0], &actions, NULL, command, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    if (err != 0) {
        close(in[1]);
        close(out[0]);
        errno = err;
        return -1;
    }
    *to_child = in[1];
    *from_child = out[0];
    return pid;
}

static int usage(void) {
    fputs("usage: client [--protocol 2025-11-25|2026-07-28] [--tool NAME] [--text TEXT]\n"
          "              [--arguments JSON] [--timeout-ms N] [--] COMMAND [ARGS...]\n",
          stderr);
    return 1;
}

static int parse(int argc, char **argv, options *o) {
    int i = 1;
    *o = (options){NULL, NULL, "hello from c", NULL, 30000, NULL};
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (i + 1 >= argc) return -1;
        const char *v = argv[++i];
        if (strcmp(a, "--protocol") == 0) {
            o->protocol = v;
        } else if (strcmp(a, "--tool") == 0) {
            o->tool = v;
        } else if (strcmp(a, "--text") == 0) {
            o->text = v;
        } else if (strcmp(a, "--arguments") == 0) {
            json_span args = json_span_of(v, strlen(v));
            if (!json_valid(args) || args.p[0] != '{') {
                fprintf(stderr, "client: --arguments must be a JSON object\n");
                return -1;
            }
            o->arguments = v;
        } else if (strcmp(a, "--timeout-ms") == 0) {
            char *end;
            errno = 0;
            unsigned long long t = strtoull(v, &end, 10);
            if (errno != 0 || *end != '\0' || t == 0 || t > 86400000ull) return -1;
            o->timeout_ms = t;
        } else {
            return -1;
        }
    }
    if (i >= argc) return -1;
    o->command = argv + i;
    return 0;
}

/* Waits until the server exits or `deadline`; 1 when it exited (`*status` set). Reads and
 * drops what it still writes meanwhile, so it cannot block on a full pipe. */
static int wait_child(pid_t pid, int *from_child, uint64_t deadline, int *status) {
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR)) return 1;
        uint64_t now = now_ms();
        if (now >= deadline) return 0;
        int wait = deadline - now < 50 ? (int)(deadline - now) : 50;
        struct pollfd p = {*from_child, POLLIN, 0};
        if (poll(&p, *from_child >= 0 ? 1 : 0, wait) > 0) {
            uint8_t sink[4096];
            if (read(*from_child, sink, sizeof sink) <= 0) {
                close(*from_child);
                *from_child = -1;
            }
        }
    }
}

/* Stops the server as the stdio transport says: close its input, give it time to exit,
 * then SIGTERM, then SIGKILL. Returns its status as waitpid gives it. */
static int stop_child(pid_t pid, int to_child, int from_child) {
    int status = 0;
    if (to_child >= 0) close(to_child);
    if (!wait_child(pid, &from_child, now_ms() + 2000, &status)) {
        kill(pid, SIGTERM);
        if (!wait_child(pid, &from_child, now_ms() + 1000, &status)) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
        }
    }
    if (from_child >= 0) close(from_child);
    return status;
}

int main(int argc, char **argv) {
    run r;
    memset(&r, 0, sizeof r);
    if (parse(argc, argv, &r.opt) != 0) return usage();
    signal(SIGPIPE, SIG_IGN); /* a server that went away is a write error, not a signal */

    uint64_t now = now_ms(), deadline = now + r.opt.timeout_ms;
    jbuf config = {0};
    jbuf_adds(&config, "{\"name\":\"c-client\",\"version\":\"0.1.0\"");
    if (r.opt.protocol) {
        jbuf_adds(&config, ",\"protocolVersion\":");
        jbuf_add_string(&config, r.opt.protocol, strlen(r.opt.protocol));
    }
    jbuf_adds(&config, "}");
    r.c = config.failed ? NULL : mcp_client_new(config.p, config.len, now);
    jbuf_free(&config);
    if (r.c == NULL) {
        const char *why = mcp_last_error();
        fprintf(stderr, "client: mcp_client_new failed: %s\n", why ? why : "out of memory");
        return 1;
    }

    int to_child = -1, from_child = -1;
    pid_t pid = spawn(r.opt.command, &to_child, &from_child);
    if (pid < 0) {
        fprintf(stderr, "client: cannot start %s: %s\n", r.opt.command[0], strerror(errno));
        mcp_client_free(r.c);
        return 1;
    }

    jbuf event = {0};
    while (r.phase != DONE) {
        /* 1. Events, and what the library has to send */
        const char *json;
        size_t len;
        while (r.phase != DONE && mcp_client_poll_event(r.c, &json, &len) == MCP_OK) {
            jbuf_clear(&event); /* a copy: the library's text lives until the next poll */
            jbuf_add(&event, json, len);
            if (event.failed) {
                fail(&r, 1, "out of memory");
            } else {
                handle_event(&r, now, json_span_of(event.p, event.len));
            }
        }
        const uint8_t *data;
        while (mcp_client_poll_transmit(r.c, &data, &len) == MCP_OK) {
            if (write_all(to_child, data, len) != 0 && r.phase != DONE) {
                fail(&r, 1, "the server closed its input (%s)", strerror(errno));
            }
        }
        if (r.phase == DONE) break;
        /* 2. Wait for the server until the earliest deadline, ours or the library's */
        uint64_t wake = deadline, lib;
        if (mcp_client_poll_timeout(r.c, &lib) == MCP_OK && lib < wake) wake = lib;
        int timeout = wake <= now ? 0 : (wake - now > INT_MAX ? INT_MAX : (int)(wake - now));
        int reading = mcp_client_wants_read(r.c) == 1; /* 0: drain the library first */
        struct pollfd p = {from_child, POLLIN, 0};
        int ready = poll(&p, reading ? 1 : 0, timeout);
        if (ready < 0 && errno != EINTR) {
            fail(&r, 1, "poll: %s", strerror(errno));
            break;
        }
        now = now_ms();
        /* 3. Feed in what came, and the time */
        if (reading && ready > 0) {
            uint8_t buf[65536];
            ssize_t n = read(from_child, buf, sizeof buf);
            if (n > 0) {
                check(&r, mcp_client_handle_bytes(r.c, now, buf, (size_t)n), "handle_bytes");
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                check(&r, mcp_client_handle_eof(r.c, now), "handle_eof");
                if (r.phase != DONE) {
                    /* the `closed` event, if any, says why; without one this is the reason */
                    const char *j;
                    size_t l;
                    while (r.phase != DONE && mcp_client_poll_event(r.c, &j, &l) == MCP_OK) {
                        jbuf_clear(&event);
                        jbuf_add(&event, j, l);
                        handle_event(&r, now, json_span_of(event.p, event.len));
                    }
                    if (r.phase != DONE) fail(&r, 1, "the server closed its output");
                }
            }
        }
        if (mcp_client_poll_timeout(r.c, &lib) == MCP_OK && lib <= now) {
            check(&r, mcp_client_handle_timeout(r.c, now), "handle_timeout");
        }
        if (r.phase != DONE && now >= deadline) {
            fail(&r, 2, "no result within %" PRIu64 " ms", r.opt.timeout_ms);
        }
    }

    /* Say goodbye (a courtesy: closing its input is what ends a stdio server) */
    if (mcp_client_close(r.c, now) == MCP_OK) {
        const uint8_t *data;
        size_t len;
        while (mcp_client_poll_transmit(r.c, &data, &len) == MCP_OK) {
            if (write_all(to_child, data, len) != 0) break;
        }
    }
    int status = stop_child(pid, to_child, from_child);
    if (r.exit_code == 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        fprintf(stderr, "client: note: the server exited with status %d\n", WEXITSTATUS(status));
    }
    jbuf_free(&event);
    jbuf_free(&r.out);
    mcp_client_free(r.c);
    return r.exit_code;
}
