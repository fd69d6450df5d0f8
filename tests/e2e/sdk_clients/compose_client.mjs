// The official MCP TypeScript SDK's client on the composed server (two examples mounted):
// `node compose_client.mjs URL PACKAGE`, PACKAGE `@modelcontextprotocol/client` (2.x, asked to
// negotiate 2026-07-28) or `@modelcontextprotocol/sdk` (1.x, 2025-11-25), installed by
// tests/helpers/auth/sdk_process.py (the test copies this script beside them). It lists everything, calls a tool of each mounted server, reads a
// namespaced resource and gets a namespaced prompt, and prints one JSON line of what it saw.
const [url, pkg] = process.argv.slice(2);
const v2 = pkg === '@modelcontextprotocol/client';
const mod = v2
  ? await import('@modelcontextprotocol/client')
  : {
    ...(await import('@modelcontextprotocol/sdk/client/index.js')),
    ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
  };
const { Client, StreamableHTTPClientTransport } = mod;

const client = new Client({ name: 'ts-sdk-composition-test', version: '1.0.0' },
  v2 ? { versionNegotiation: { mode: 'auto' } } : {});
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
const era = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null;
const tools = (await client.listTools()).tools.map((tool) => tool.name);
const added = await client.callTool({ name: 'quick_add', arguments: { a: 2, b: 3 } });
const echoed = await client.callTool({ name: 'quick_echo', arguments: { text: 'hi' } });
const resources = (await client.listResources()).resources.map((resource) => resource.uri);
const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
const read = await client.readResource({ uri: 'calendar://cal/week' });
const prompt = await client.getPrompt({ name: 'cal_prepare_week', arguments: { focus: 'sleep' } });
const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
process.stdout.write(`${JSON.stringify({
  era, tools, resources, templates, prompts,
  added: added.structuredContent, echoed: echoed.content[0].text,
  read: { uri: read.contents[0].uri, mimeType: read.contents[0].mimeType },
  prompt: prompt.messages[0].content.text,
})}\n`);
await client.close();
process.exit(0);
