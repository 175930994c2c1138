/*
 * mcp.h: the C API of mcp-sansio, a sans-IO Model Context Protocol engine.
 *
 * A session is an opaque handle (mcp_server, mcp_client). You own the I/O and the clock:
 * feed the bytes you read (mcp_*_handle_bytes, _handle_eof), call _handle_timeout when the
 * deadline of _poll_timeout passes, and drain the outputs after every call: events first
 * (_poll_event: one JSON object each), then the bytes to write (_poll_transmit). Time is
 * your monotonic clock in milliseconds (any origin), passed as now_ms. The library never
 * blocks, never calls back into your code and starts no thread. A handle is used by one
 * thread at a time. Outputs are borrowed from the handle: an event until the next
 * _poll_event, bytes until the next _poll_transmit (so an event may be read while answering it).
 * Negative statuses are failures; mcp_last_error() says why.
 *
 * The run loop: a stdio server with one tool (error handling trimmed)
 *
 *   #define _POSIX_C_SOURCE 200809L     // poll, clock_gettime under -std=c11
 *   #include <poll.h>
 *   #include <stdio.h>
 *   #include <stdlib.h>
 *   #include <string.h>
 *   #include <time.h>
 *   #include <unistd.h>
 *   #include "mcp.h"
 *
 *   static uint64_t now_ms(void) {
 *       struct timespec t;
 *       clock_gettime(CLOCK_MONOTONIC, &t);
 *       return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
 *   }
 *
 *   int main(void) {
 *       const char *config = "{\"name\":\"demo\",\"version\":\"1.0\"}";
 *       const char *tool = "{\"name\":\"hello\",\"inputSchema\":{\"type\":\"object\"}}";
 *       const char *answer = "{\"content\":[{\"type\":\"text\",\"text\":\"hello\"}]}";
 *       mcp_server *s = mcp_server_new(config, strlen(config), now_ms());
 *       if (!s) { fprintf(stderr, "%s\n", mcp_last_error()); return 1; }
 *       mcp_server_add_tool(s, tool, strlen(tool));
 *       int eof = 0;
 *       while (!mcp_server_is_closed(s)) {
 *           const char *event;               // 1. events (tools/list is answered for you)
 *           size_t len;
 *           const char *request = "{\"kind\":\"request\",\"request\":";
 *           while (mcp_server_poll_event(s, &event, &len) == MCP_OK)
 *               if (strncmp(event, request, strlen(request)) == 0)
 *                   mcp_server_respond(s, now_ms(), strtoull(event + strlen(request), NULL, 10),
 *                                      answer, strlen(answer));
 *           const uint8_t *out;              // 2. bytes to write, borrowed until the next poll
 *           while (mcp_server_poll_transmit(s, &out, &len) == MCP_OK)
 *               for (size_t done = 0; done < len;) {
 *                   ssize_t w = write(1, out + done, len - done);
 *                   if (w <= 0) { mcp_server_free(s); return 1; }
 *                   done += (size_t)w;
 *               }
 *           uint64_t deadline, now = now_ms();   // 3. wait for input or the next deadline
 *           int wait = -1;
 *           if (mcp_server_poll_timeout(s, &deadline) == MCP_OK)
 *               wait = deadline <= now ? 0 : deadline - now > 60000 ? 60000 : (int)(deadline - now);
 *           struct pollfd in = {.fd = eof ? -1 : 0, .events = POLLIN};
 *           if (poll(&in, 1, wait) <= 0) { mcp_server_handle_timeout(s, now_ms()); continue; }
 *           uint8_t buf[65536];
 *           ssize_t n = read(0, buf, sizeof buf);
 *           if (n > 0) mcp_server_handle_bytes(s, now_ms(), buf, (size_t)n);
 *           else { eof = 1; mcp_server_handle_eof(s, now_ms()); }
 *       }
 *       mcp_server_free(s);
 *       return 0;
 *   }
 *
 * Read stdin only while mcp_server_wants_read(s) is 1 (the queues are bounded). A client is
 * the same loop over a child process's pipes: mcp_client_new queues the handshake, a
 * "ready" event says requests may go out (mcp_client_request), and each request ends in
 * exactly one "response" event carrying its number.
 *
 * Memory: the library frees only what it allocated. Handles are yours to free (_free, once;
 * NULL is fine). Every pointer you pass is borrowed for the call only; strings are
 * (pointer, length) pairs of UTF-8, NUL not needed; optional ones may be NULL. Pointers the
 * library gives back live inside the handle: _poll_event's text until the next _poll_event,
 * _poll_transmit's bytes until the next _poll_transmit (or _free); mcp_last_error() until your next mcp_* call on that thread;
 * mcp_version() forever. A panic inside the library (a bug) never crosses into C: the call
 * returns MCP_ERR_PANIC and the handle is poisoned (build with panic=unwind, the default).
 *
 * Events: one compact JSON object each (NUL-terminated), "kind" its first key and the
 * "request" or "input" number (what you pass back) right after it, so a prefix match reads
 * both. Kinds not listed (a newer library's) carry {"kind":..,"debug":".."}: skip them.
 * Server:
 *   {"kind":"request","request":N,"method":"tools/call","params":{..},"protocolVersion":"..",
 *    "wantsProgress":true,"name":"echo","arguments":{..}}      (name, arguments: tools/call)
 *       answer with mcp_server_respond or _respond_error; the library answers tools/list,
 *       ping, logging/setLevel, a call of an unknown tool and arguments failing inputSchema
 *   {"kind":"cancelled","request":N,"reason"?:".."}   the client gave up: stop working on N;
 *       once this event is polled N is no longer open (responding returns MCP_ERR_STATE);
 *       an answer given before it was polled returns MCP_OK and is dropped
 *   {"kind":"ready","protocolVersion":"2025-11-25","clientInfo":{..},"clientCapabilities":{..}}
 *       a 2024/2025 client finished its handshake (a 2026 client has no such moment)
 *   {"kind":"notification","method":"..","params":{..}}
 * Client:
 *   {"kind":"ready","protocolVersion":"..","serverInfo":{..},"capabilities":{..},
 *    "instructions":".."|null}
 *   {"kind":"response","request":N,"result":{..}}
 *   {"kind":"response","request":N,"error":{"code":..,"message":"..","data"?:..},
 *    "failure":"remote"|"timeout"|"cancelled"|"closed"|"transport"|"too_large"|..}
 *       local failures carry code -32001 (timeout), -32800 (cancelled), -32000 (closed,
 *       transport) or -32603
 *   {"kind":"progress","request":N,"progress":..,"total"?:..,"message"?:".."}
 *   {"kind":"request","request":N,"method":"..","params":{..}}   (a method of extraMethods)
 *   {"kind":"input_required","input":M,"requests":{"<key>":{"method":"elicitation/create",
 *    "params":{..}}},"request"?:N}   answer with mcp_client_provide_input or _refuse_input
 *   {"kind":"task_status","request":N,"status":"working",..,"message"?:".."}   (information)
 *   {"kind":"notification","method":"..","params":{..}}
 *   {"kind":"session_renewed","protocolVersion":".."}
 * Both:
 *   {"kind":"unblocked"}   commands refused with MCP_ERR_BLOCKED may be tried again
 *   {"kind":"closed","reason":"peer_closed"|"local"|"handshake"|"transport","message":".."}
 *       always the last event
 */

#ifndef MCP_SANSIO_H
#define MCP_SANSIO_H

/* Generated by cbindgen from mcp-capi/src: do not edit. Regenerate with
   MCP_CAPI_BLESS=1 cargo test -p mcp-sansio-capi --test header */

#include <stddef.h>
#include <stdint.h>

/**
 * The outcome of a call
 *
 * Non-negative values are successes, negative values failures; after a failure
 * `mcp_last_error()` says why in words.
 */
typedef enum mcp_status {
    /**
     * Done
     */
    MCP_OK = 0,
    /**
     * Nothing to poll: no bytes, no event, no deadline
     */
    MCP_NONE = 1,
    /**
     * A required pointer is NULL (or a NULL pointer was given with a non-zero length)
     */
    MCP_ERR_NULL = -1,
    /**
     * A string is not valid UTF-8
     */
    MCP_ERR_UTF8 = -2,
    /**
     * Malformed JSON, or JSON of the wrong shape (an unknown config key, a result that is
     * not an object, a tool without a name)
     */
    MCP_ERR_JSON = -3,
    /**
     * Not allowed now: an unknown request or input handle, a closed session, a method the
     * era does not allow, a session not ready yet
     */
    MCP_ERR_STATE = -4,
    /**
     * A limit is reached: drain `poll_transmit` and `poll_event` first, then try again
     */
    MCP_ERR_BLOCKED = -5,
    /**
     * A bug of this library was caught at the boundary; the handle is poisoned and every
     * later call on it returns this (free it with its `_free` function)
     */
    MCP_ERR_PANIC = -6,
} mcp_status;

/**
 * A client session (opaque to C): create it with `mcp_client_new`, free it with
 * `mcp_client_free`
 */
typedef struct mcp_client mcp_client;

/**
 * A server session (opaque to C): create it with `mcp_server_new`, free it with
 * `mcp_server_free`
 */
typedef struct mcp_server mcp_server;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * Creates a client session; its first message (`initialize` or `server/discover`) is
 * queued at once: poll transmits and write them to the server.
 *
 * `config_json` (`len` bytes of UTF-8; borrowed for the call) is a JSON object:
 * `{"name": "..", "version": "..", "title"?: "..", "protocolVersion"?: "auto" | "legacy" |
 * "modern" | "2025-11-25" | "2026-07-28" | .., "capabilities"?: {..}, "extraMethods"?:
 * ["..."], "requestTimeoutMs"?: N}`. `protocolVersion` defaults to `"auto"`: ask
 * `server/discover` (2026) and fall back to `initialize` when the server does not answer it
 * (within 3 s); a 2024/2025 version string means that version's `initialize` handshake
 * only, `"legacy"` the latest of them, `"modern"` or `"2026-07-28"` discovery only.
 * `requestTimeoutMs` (default 60000; 0: none) bounds each request. `capabilities` defaults
 * to `{}`; declaring `sampling`, `elicitation` or `roots` makes the server's requests of
 * them arrive as `input_required` events. An unknown key is an error naming it.
 *
 * `now_ms`: the caller's monotonic clock, as for `mcp_server_new`. Returns a handle owned by
 * the caller (free it with `mcp_client_free`), or NULL on error (see `mcp_last_error()`).
 *
 * # Safety
 * `config_json` is NULL or points to `len` readable bytes.
 */
struct mcp_client *mcp_client_new(const char *config_json, size_t len, uint64_t now_ms);

/**
 * Frees a client session and everything it lent out. NULL is a no-op. The handle must not
 * be used afterwards.
 *
 * # Safety
 * `client` is NULL or a handle from `mcp_client_new` not freed yet.
 */
void mcp_client_free(struct mcp_client *client);

/**
 * Feeds bytes read from the server (newline-delimited JSON; any chunking). As
 * `mcp_server_handle_bytes`.
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 * `data` is NULL or points to `len` readable bytes.
 */
enum mcp_status mcp_client_handle_bytes(struct mcp_client *client,
                                        uint64_t now_ms,
                                        const uint8_t *data,
                                        size_t len);

/**
 * The server closed its output (EOF): requests in flight end with `response` events whose
 * `failure` is `"closed"`, then a `closed` event.
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 */
enum mcp_status mcp_client_handle_eof(struct mcp_client *client, uint64_t now_ms);

/**
 * Fires every timer due at or before `now_ms`: a request past its timeout ends with a
 * `response` event whose `failure` is `"timeout"` (and `notifications/cancelled` goes to the
 * server); `"auto"` discovery falls back to `initialize`.
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 */
enum mcp_status mcp_client_handle_timeout(struct mcp_client *client, uint64_t now_ms);

/**
 * The next deadline in the caller's milliseconds, as `mcp_server_poll_timeout`.
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 * `deadline_ms` is NULL or valid for writing one `u64`.
 */
enum mcp_status mcp_client_poll_timeout(struct mcp_client *client, uint64_t *deadline_ms);

/**
 * The bytes to write to the server, as `mcp_server_poll_transmit` (borrowed until the next
 * `mcp_client_poll_transmit` or `mcp_client_free` on it).
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 * `data` is NULL or valid for writing one `*const u8`.
 * `len` is NULL or valid for writing one `usize`.
 */
enum mcp_status mcp_client_poll_transmit(struct mcp_client *client,
                                         const uint8_t **data,
                                         size_t *len);

/**
 * The next event as one JSON object, as `mcp_server_poll_event` (NUL-terminated, borrowed
 * until the next `mcp_client_poll_event` or `mcp_client_free` on it).
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 * `json` is NULL or valid for writing one `*const c_char`.
 * `len` is NULL or valid for writing one `usize`.
 */
enum mcp_status mcp_client_poll_event(struct mcp_client *client, const char **json, size_t *len);

/**
 * Sends request `method` (`method_len` bytes of UTF-8, e.g. `tools/list`, `tools/call`)
 * with `params_json` (`params_len` bytes, a JSON object; NULL: no params), asking the server
 * for progress. On `MCP_OK`, `*request_out` is the request's number: its outcome arrives as
 * exactly one `response` event with that `"request"` (and any `progress` events before it).
 *
 * Returns `MCP_ERR_STATE` before the `ready` event, after close, or for a method the era or
 * the server's capabilities do not allow; `MCP_ERR_BLOCKED` when too many requests are in
 * flight or bytes wait; `MCP_ERR_JSON` for params that are not an object. The library adds
 * what the era needs (`_meta` of 2026 requests, the progress token).
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 * `method` is NULL or points to `method_len` readable bytes.
 * `params_json` is NULL or points to `params_len` readable bytes.
 * `request_out` is NULL or valid for writing one `u64`.
 */
enum mcp_status mcp_client_request(struct mcp_client *client,
                                   uint64_t now_ms,
                                   const char *method,
                                   size_t method_len,
                                   const char *params_json,
                                   size_t params_len,
                                   uint64_t *request_out);

/**
 * `mcp_client_request` with this request's own timeout: `timeout_ms` milliseconds, 0 for
 * none (a long-lived request such as a 2026 `subscriptions/listen`), negative for the
 * config's `requestTimeoutMs`. Statuses as `mcp_client_request`.
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 * `method` is NULL or points to `method_len` readable bytes.
 * `params_json` is NULL or points to `params_len` readable bytes.
 * `request_out` is NULL or valid for writing one `u64`.
 */
enum mcp_status mcp_client_request_timeout(struct mcp_client *client,
                                           uint64_t now_ms,
                                           const char *method,
                                           size_t method_len,
                                           const char *params_json,
                                           size_t params_len,
                                           int64_t timeout_ms,
                                           uint64_t *request_out);

/**
 * Cancels request `request`: `notifications/cancelled` goes to the server and its
 * `response` event follows with `"failure": "cancelled"`; a late answer is dropped.
 *
 * Returns `MCP_ERR_STATE` when the request is not in flight (unknown, or its `response`
 * event was polled or is queued).
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 */
enum mcp_status mcp_client_cancel(struct mcp_client *client, uint64_t now_ms, uint64_t request);

/**
 * Answers a server's `request` event (a method of `extraMethods`; `ping` is answered by the
 * library) with `result_json`, as `mcp_server_respond`.
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 * `result_json` is NULL or points to `len` readable bytes.
 */
enum mcp_status mcp_client_respond(struct mcp_client *client,
                                   uint64_t now_ms,
                                   uint64_t request,
                                   const char *result_json,
                                   size_t len);

/**
 * Answers a server's `request` event with a JSON-RPC error, as `mcp_server_respond_error`.
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 * `message` is NULL or points to `len` readable bytes.
 */
enum mcp_status mcp_client_respond_error(struct mcp_client *client,
                                         uint64_t now_ms,
                                         uint64_t request,
                                         int64_t code,
                                         const char *message,
                                         size_t len);

/**
 * Answers an `input_required` event `input` with `responses_json` (`len` bytes of UTF-8; a
 * JSON object with one answer per key of the event's `"requests"`: an elicitation result
 * `{"action": "accept", "content": {..}}`, a sampling result, or a roots list `{"roots":
 * [..]}`). A 2026 request is retried with the answers; a 2025 server request is answered.
 *
 * Returns `MCP_ERR_STATE` when nothing waits under `input`; `MCP_ERR_JSON` when an answer is
 * malformed or a key is missing.
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 * `responses_json` is NULL or points to `len` readable bytes.
 */
enum mcp_status mcp_client_provide_input(struct mcp_client *client,
                                         uint64_t now_ms,
                                         uint64_t input,
                                         const char *responses_json,
                                         size_t len);

/**
 * Refuses an `input_required` event `input` with a JSON-RPC error `code` and `message`: a
 * 2026 request is cancelled (its `response` event says `"failure": "cancelled"`), a 2025
 * server request is answered with the error.
 *
 * Returns `MCP_ERR_STATE` when nothing waits under `input`.
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 * `message` is NULL or points to `len` readable bytes.
 */
enum mcp_status mcp_client_refuse_input(struct mcp_client *client,
                                        uint64_t now_ms,
                                        uint64_t input,
                                        int64_t code,
                                        const char *message,
                                        size_t len);

/**
 * Closes the session now: requests in flight end with `response` events (`"failure":
 * "closed"`), then a `closed` event. Bytes already queued can still be polled. Closing a
 * closed session is a no-op returning `MCP_OK`.
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 */
enum mcp_status mcp_client_close(struct mcp_client *client, uint64_t now_ms);

/**
 * Whether the caller should read more input from the server, as `mcp_server_wants_read`.
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 */
int mcp_client_wants_read(const struct mcp_client *client);

/**
 * Whether the session has closed: 1 closed, 0 open, negative for a NULL or poisoned handle
 * (as `mcp_server_is_closed`).
 *
 * # Safety
 * `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
 */
int mcp_client_is_closed(const struct mcp_client *client);

/**
 * Creates a server session.
 *
 * `config_json` (`len` bytes of UTF-8, not necessarily NUL-terminated; borrowed for the call
 * only) is a JSON object: `{"name": "..", "version": "..", "title"?: "..", "instructions"?:
 * "..", "capabilities"?: {..}, "era"?: "both" | "legacy" | "modern", "extraMethods"?:
 * ["..."], "requestTimeoutMs"?: N}`. `capabilities` defaults to `{"tools": {}, "logging":
 * {}}`; `era` defaults to `"both"` (one session serves a 2025 client's `initialize` and a
 * 2026 client's per-request `_meta`); `extraMethods` are methods outside the spec the
 * application answers (others get -32601); `requestTimeoutMs` (0: none) applies to requests
 * the server sends. An unknown key is an error naming it.
 *
 * `now_ms` is the caller's monotonic clock in milliseconds (any origin); every later
 * `now_ms` of this handle uses the same clock.
 *
 * Returns a new handle owned by the caller (free it with `mcp_server_free`), or NULL on
 * error (`mcp_last_error()` says why: NULL config, bad UTF-8, bad JSON, an unknown key).
 *
 * # Safety
 * `config_json` is NULL or points to `len` readable bytes.
 */
struct mcp_server *mcp_server_new(const char *config_json, size_t len, uint64_t now_ms);

/**
 * Frees a server session and everything it lent out (the pointers from `poll_transmit` and
 * `poll_event` become invalid). NULL is a no-op. The handle must not be used afterwards.
 *
 * # Safety
 * `server` is NULL or a handle from `mcp_server_new` not freed yet.
 */
void mcp_server_free(struct mcp_server *server);

/**
 * Registers a tool: `tool_json` (`len` bytes of UTF-8, borrowed for the call) is a `Tool` of
 * the MCP schema: `{"name": "..", "description"?: "..", "inputSchema": {"type": "object",
 * ..}, ..}`.
 *
 * The library answers `tools/list` itself (paginated), refuses a `tools/call` of an unknown
 * tool and answers arguments that fail the tool's `inputSchema` with an `isError` result; a
 * valid `tools/call` arrives as a `request` event with `"name"` and `"arguments"`.
 *
 * Returns `MCP_OK`; `MCP_ERR_JSON` for a malformed tool, an invalid name or input schema;
 * `MCP_ERR_STATE` for a name already registered; `MCP_ERR_NULL`, `MCP_ERR_UTF8`.
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 * `tool_json` is NULL or points to `len` readable bytes.
 */
enum mcp_status mcp_server_add_tool(struct mcp_server *server, const char *tool_json, size_t len);

/**
 * Feeds bytes read from the client (stdio: newline-delimited JSON; any chunking, partial
 * lines are kept until their newline). `data` is borrowed for the call; NULL is allowed
 * with `len` 0.
 *
 * Never fails on what the peer sent: bad input becomes error replies or events. Returns
 * `MCP_OK`, or `MCP_ERR_NULL` / `MCP_ERR_PANIC`.
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 * `data` is NULL or points to `len` readable bytes.
 */
enum mcp_status mcp_server_handle_bytes(struct mcp_server *server,
                                        uint64_t now_ms,
                                        const uint8_t *data,
                                        size_t len);

/**
 * The client closed its side (EOF on stdin). Requests the client sent may still be
 * answered; a `closed` event follows once the last one is.
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 */
enum mcp_status mcp_server_handle_eof(struct mcp_server *server, uint64_t now_ms);

/**
 * Fires every timer due at or before `now_ms` (call it when the deadline of
 * `mcp_server_poll_timeout` has passed; calling it early or twice is harmless).
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 */
enum mcp_status mcp_server_handle_timeout(struct mcp_server *server, uint64_t now_ms);

/**
 * The next deadline, in the caller's milliseconds: `MCP_OK` with `*deadline_ms` set (it may
 * be in the past: call `mcp_server_handle_timeout` at once), or `MCP_NONE` when no timer is
 * armed (`*deadline_ms` untouched). Re-read it after every call that brings `now_ms`.
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 * `deadline_ms` is NULL or valid for writing one `u64`.
 */
enum mcp_status mcp_server_poll_timeout(struct mcp_server *server, uint64_t *deadline_ms);

/**
 * The bytes to write to the client: `MCP_OK` with `*data`/`*len` set to everything queued,
 * or `MCP_NONE` (`*data` NULL, `*len` 0).
 *
 * The bytes are borrowed from the handle and stay valid until the next
 * `mcp_server_poll_transmit` or `mcp_server_free` on it (other calls leave them alone);
 * write them (or copy what a short write left) before that.
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 * `data` is NULL or valid for writing one `*const u8`.
 * `len` is NULL or valid for writing one `usize`.
 */
enum mcp_status mcp_server_poll_transmit(struct mcp_server *server,
                                         const uint8_t **data,
                                         size_t *len);

/**
 * The next event: `MCP_OK` with `*json`/`*len` set to one JSON object (UTF-8, `len` bytes,
 * followed by a NUL byte not counted in `len`), or `MCP_NONE` (`*json` NULL, `*len` 0).
 *
 * The text is borrowed from the handle and stays valid until the next `mcp_server_poll_event`
 * or `mcp_server_free` on it: other calls (answering the event too) leave it alone.
 * Polling events may queue bytes to transmit (answers the library gives itself): poll
 * transmits after events.
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 * `json` is NULL or valid for writing one `*const c_char`.
 * `len` is NULL or valid for writing one `usize`.
 */
enum mcp_status mcp_server_poll_event(struct mcp_server *server, const char **json, size_t *len);

/**
 * Answers request `request` (the number of its `request` event) with `result_json`
 * (`len` bytes of UTF-8, a JSON object such as `{"content": [{"type": "text", "text":
 * ".."}]}`; borrowed for the call).
 *
 * A request stays open until it is answered or until `mcp_server_poll_event` hands out its
 * `cancelled` event (or the `closed` event). Answering a request the client cancelled (or
 * after the session closed) before that event was polled returns `MCP_OK` and sends
 * nothing.
 *
 * Returns `MCP_OK`; `MCP_ERR_STATE` when the request is not open (unknown, answered
 * already, its `cancelled` or the `closed` event polled); `MCP_ERR_JSON` when `result_json`
 * is not a JSON object (the request stays open).
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 * `result_json` is NULL or points to `len` readable bytes.
 */
enum mcp_status mcp_server_respond(struct mcp_server *server,
                                   uint64_t now_ms,
                                   uint64_t request,
                                   const char *result_json,
                                   size_t len);

/**
 * Answers request `request` with a JSON-RPC error `code` and `message` (`len` bytes of
 * UTF-8; NULL with `len` 0 is an empty message; borrowed for the call).
 *
 * Returns `MCP_OK`, or `MCP_ERR_STATE` when the request is not open (as for
 * `mcp_server_respond`).
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 * `message` is NULL or points to `len` readable bytes.
 */
enum mcp_status mcp_server_respond_error(struct mcp_server *server,
                                         uint64_t now_ms,
                                         uint64_t request,
                                         int64_t code,
                                         const char *message,
                                         size_t len);

/**
 * Reports progress on open request `request`: `progress` (finite, increasing with every
 * report), `total` (NaN: none) and an optional `message` (`len` bytes of UTF-8; NULL: none).
 *
 * Only when the client asked for progress (its `request` event says `"wantsProgress":
 * true`). Returns `MCP_OK`; `MCP_ERR_STATE` when the request is not open, the client did not
 * ask, or the value does not increase or is not finite; `MCP_ERR_BLOCKED` never (progress is
 * dropped rather than blocking).
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 * `message` is NULL or points to `len` readable bytes.
 */
enum mcp_status mcp_server_progress(struct mcp_server *server,
                                    uint64_t now_ms,
                                    uint64_t request,
                                    double progress,
                                    double total,
                                    const char *message,
                                    size_t len);

/**
 * Sends a notification `method` (`method_len` bytes of UTF-8) with `params_json`
 * (`params_len` bytes, a JSON object; NULL: no params), e.g. `notifications/message` with
 * `{"level": "info", "data": ".."}`. A `notifications/message` below the level the client
 * set with `logging/setLevel` (default `info`) is held back and still returns `MCP_OK`.
 * `notifications/{tools,prompts,resources}/list_changed` (params ignored; the server must
 * declare `listChanged` for that list, else `MCP_ERR_STATE`) and
 * `notifications/resources/updated` (`{"uri": ".."}`) go only to the clients that
 * subscribed: a 2025 session, or the 2026 `subscriptions/listen` streams that asked.
 *
 * Returns `MCP_OK`; `MCP_ERR_STATE` when the session is closed or the method is one the
 * library sends itself (`progress`, `cancelled`); `MCP_ERR_BLOCKED` when too many bytes wait
 * in `poll_transmit`; `MCP_ERR_JSON` for params that are not an object.
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 * `method` is NULL or points to `method_len` readable bytes.
 * `params_json` is NULL or points to `params_len` readable bytes.
 */
enum mcp_status mcp_server_notify(struct mcp_server *server,
                                  uint64_t now_ms,
                                  const char *method,
                                  size_t method_len,
                                  const char *params_json,
                                  size_t params_len);

/**
 * Closes the session now (the server shuts down): every open request is dropped
 * unanswered, a `closed` event (`"reason": "local"`) follows. Bytes already queued can
 * still be polled. Closing a closed session is a no-op returning `MCP_OK`.
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 */
enum mcp_status mcp_server_close(struct mcp_server *server, uint64_t now_ms);

/**
 * Whether the caller should read more input from the client: 1 yes, 0 not now (too many
 * events or answers wait: drain them first, and `mcp_server_poll_timeout` becomes due when
 * the session can take more), negative (`MCP_ERR_NULL`, `MCP_ERR_PANIC`) for a NULL or
 * poisoned handle.
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 */
int mcp_server_wants_read(const struct mcp_server *server);

/**
 * Whether the session has closed (its `closed` event is queued or was polled): 1 closed,
 * 0 open, negative (`MCP_ERR_NULL`, `MCP_ERR_PANIC`) for a NULL or poisoned handle, which
 * a loop `while (!mcp_server_is_closed(s))` also leaves.
 *
 * # Safety
 * `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
 */
int mcp_server_is_closed(const struct mcp_server *server);

/**
 * The library's version, e.g. `"0.1.0"`: a static NUL-terminated string (never freed,
 * valid for the life of the process).
 */
const char *mcp_version(void);

/**
 * The message of this thread's last failed call (a status below 0, or a NULL from a `_new`
 * function), NUL-terminated UTF-8; `""` when no call failed yet on this thread.
 *
 * Owned by the library: do not free it. It stays valid until this thread's next call of an
 * `mcp_*` function other than `mcp_last_error` and `mcp_version`; copy it to keep it.
 * Successful calls do not clear it.
 */
const char *mcp_last_error(void);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* MCP_SANSIO_H */
