// The official TypeScript SDK's client against a stdio server (ours), printing what it saw.
//
//     node ts_client.mjs SERVER [ARGS...]     (stdio: starts SERVER as a child process)
//     node ts_client.mjs http://HOST:PORT/mcp (Streamable HTTP)
//
// The SDK comes from $MCP_INTEROP_NODE_MODULES (default: ./node_modules next to this file).
// Connects (the 2025-11-25 initialize handshake), lists tools, calls echo and add, calls slow
// with progress, reads the static resource and a template, gets the greeting prompt and calls
// an unknown tool. Each step's outcome (or its error) goes into one JSON object printed on a
// line starting with `INTEROP-SUMMARY `; the Rust test asserts on it.

import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const nodeModules = process.env.MCP_INTEROP_NODE_MODULES || path.join(here, "node_modules");
const sdk = (sub) =>
  import(pathToFileURL(path.join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", sub)).href);

const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

const DEADLINE_MS = 45_000;
const summary = {};
const texts = (blocks) => (blocks ?? []).map((b) => b.text ?? null);

async function step(key, fn) {
  try {
    summary[key] = await fn();
  } catch (e) {
    summary[key] = { error: { code: e.code ?? null, message: String(e.message ?? e) } };
  }
}

async function run() {
  const [command, ...args] = process.argv.slice(2);
  const transport = command.startsWith("http://")
    ? new StreamableHTTPClientTransport(new URL(command))
    : new StdioClientTransport({ command, args, stderr: "inherit" });
  // The client hands the negotiated version to the transport; record it (and keep the HTTP
  // transport's own use of it).
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    summary.protocol_version = version;
    setVersion?.(version);
  };
  const client = new Client({ name: "ts-interop-client", version: "1.0.0" });
  await client.connect(transport);
  try {
    summary.server_name = client.getServerVersion()?.name ?? null;
    summary.instructions = client.getInstructions() ?? null;
    await step("tools", async () => (await client.listTools()).tools.map((t) => t.name).sort());
    await step("echo", async () => {
      const r = await client.callTool({ name: "echo", arguments: { text: "hello from typescript" } });
      return { texts: texts(r.content), is_error: Boolean(r.isError) };
    });
    await step("add", async () => {
      const r = await client.callTool({ name: "add", arguments: { a: 2, b: 3.5 } });
      return { texts: texts(r.content), is_error: Boolean(r.isError) };
    });
    await step("slow", async () => {
      const seen = [];
      const r = await client.callTool({ name: "slow", arguments: { steps: 3 } }, undefined, {
        onprogress: (p) => seen.push({ progress: p.progress, total: p.total ?? null, message: p.message ?? null }),
      });
      return { texts: texts(r.content), is_error: Boolean(r.isError), progress: seen };
    });
    const read = async (uri) =>
      (await client.readResource({ uri })).contents.map((c) => ({ uri: c.uri, text: c.text ?? null }));
    await step("static", () => read("test://static-text"));
    await step("template", () => read("test://template/42/data"));
    await step("prompt", async () =>
      (await client.getPrompt({ name: "greeting", arguments: { name: "Ada" } })).messages.map((m) => ({
        role: m.role,
        text: m.content.text ?? null,
      })),
    );
    await step("unknown_tool", async () => {
      const r = await client.callTool({ name: "no-such-tool", arguments: {} });
      return { texts: texts(r.content), is_error: Boolean(r.isError) };
    });
  } finally {
    await client.close();
  }
}

let code = 0;
const timer = setTimeout(() => {
  summary.fatal = `no end after ${DEADLINE_MS} ms`;
  console.log("INTEROP-SUMMARY " + JSON.stringify(summary));
  process.exit(1);
}, DEADLINE_MS);
try {
  await run();
} catch (e) {
  summary.fatal = String(e?.stack ?? e);
  code = 1;
}
clearTimeout(timer);
console.log("INTEROP-SUMMARY " + JSON.stringify(summary));
process.exit(code);
