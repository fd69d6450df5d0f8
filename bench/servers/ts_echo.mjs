// The echo server on the official TypeScript SDK (@modelcontextprotocol/server, pinned in
// bench/package.json), written the way the SDK's serving guides show it: a factory that builds an
// McpServer with its tools, served by `serveStdio` over stdio, or by `createMcpHandler` mounted on
// plain node:http (through `toNodeHandler` and the localhost Host/Origin guards of
// @modelcontextprotocol/node) over Streamable HTTP.
//
//   node bench/servers/ts_echo.mjs [--tools N]                  stdio
//   node bench/servers/ts_echo.mjs [--tools N] --port PORT      HTTP on 127.0.0.1:PORT, path /mcp
//
// HTTP uses the SDK's cheapest mode: `responseMode: 'json'` (one JSON body per answer, never an
// SSE stream). `createMcpHandler` is stateless: the factory runs once per request, and 2025-era
// (initialize) traffic is served per request without sessions.
//
// --tools N registers `echo` plus `echo_1` ... `echo_{N-1}` (the tool-count section).

import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

function option(name, fallback) {
    const at = process.argv.indexOf(name);
    if (at < 0) return fallback;
    const value = Number.parseInt(process.argv[at + 1] ?? '', 10);
    if (!Number.isInteger(value) || value < 1) {
        console.error(`ts_echo.mjs: ${name} needs a positive integer, got ${process.argv[at + 1]}`);
        process.exit(2);
    }
    return value;
}

const nTools = option('--tools', 1);
const port = option('--port', 0);

function buildServer() {
    const server = new McpServer({ name: 'echo', version: '1.0.0' });
    for (let i = 0; i < nTools; i++) {
        server.registerTool(
            i === 0 ? 'echo' : `echo_${i}`,
            { description: 'Echo the text back.', inputSchema: z.object({ text: z.string() }) },
            async ({ text }) => ({ content: [{ type: 'text', text }] })
        );
    }
    return server;
}

if (port === 0) {
    serveStdio(buildServer);
} else {
    // The Node adapter (and node:http) only where HTTP is served, as a stdio-only server would.
    const { createServer } = await import('node:http');
    const { toNodeHandler, localhostHostValidation, localhostOriginValidation } = await import('@modelcontextprotocol/node');
    const handler = createMcpHandler(buildServer, { responseMode: 'json' });
    const nodeHandler = toNodeHandler(handler);
    const validateHost = localhostHostValidation();
    const validateOrigin = localhostOriginValidation();
    createServer((req, res) => {
        if (!validateHost(req, res) || !validateOrigin(req, res)) return;
        void nodeHandler(req, res);
    }).listen(port, '127.0.0.1');
}
