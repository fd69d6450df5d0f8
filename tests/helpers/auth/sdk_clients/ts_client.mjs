// The official MCP TypeScript SDK's client signing in through the authorization proxy:
// `node ts_client.mjs URL PACKAGE`, PACKAGE `@modelcontextprotocol/client` (2.x, 2026-07-28)
// or `@modelcontextprotocol/sdk` (1.x, 2025-11-25), both installed beside this script by
// sdk_clients.py. The same JSON lines as python_client.py: `{"authorize": URL}`, then
// `{"callback": URL}` read from stdin; `{"whoami": TEXT, "era": VERSION}`; the token the
// client holds made stale (one the server refuses) so the SDK refreshes on the 401:
// `{"refreshed": BOOL, "whoami": TEXT}`; the refresh token revoked (RFC 7009) and the tokens
// tried by hand: `{"revoked": {"access": STATUS, "refresh": ERROR}}`.
import { createInterface } from 'node:readline';

const [url, pkg] = process.argv.slice(2);
const v2 = pkg === '@modelcontextprotocol/client';
const mod = v2
  ? await import('@modelcontextprotocol/client')
  : {
    ...(await import('@modelcontextprotocol/sdk/client/index.js')),
    ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
    ...(await import('@modelcontextprotocol/sdk/client/auth.js')),
  };
const { Client, StreamableHTTPClientTransport, UnauthorizedError } = mod;

const say = (fields) => process.stdout.write(`${JSON.stringify(fields)}\n`);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const readLine = async () => JSON.parse((await lines.next()).value);

const REDIRECT = 'http://127.0.0.1:33419/callback';
let info; let tokens; let verifier; let stale = false;
const provider = {
  get redirectUrl() { return REDIRECT; },
  get clientMetadata() {
    return {
      client_name: 'typescript sdk test client', redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  },
  clientInformation() { return info; },
  saveClientInformation(saved) { info = saved; },
  tokens() { return tokens && stale ? { ...tokens, access_token: 'stale-token' } : tokens; },
  saveTokens(saved) { tokens = saved; stale = false; },
  redirectToAuthorization(authorizationUrl) { say({ authorize: authorizationUrl.href }); },
  saveCodeVerifier(saved) { verifier = saved; },
  codeVerifier() { return verifier; },
};

// 2.x negotiates 2026-07-28 only when asked to (its default is the 2025 handshake).
const client = new Client({ name: 'ts-sdk-proxy-test', version: '1.0.0' },
  v2 ? { versionNegotiation: { mode: 'auto' } } : {});
let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
try {
  await client.connect(transport);
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  const back = new URL((await readLine()).callback);
  if (v2) await transport.finishAuth(back.searchParams);
  else await transport.finishAuth(back.searchParams.get('code'));
  transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await client.connect(transport);
}
const whoami = async () => (await client.callTool({ name: 'whoami', arguments: {} })).content[0].text;
const era = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null;
say({ whoami: await whoami(), era });
const first = tokens;
stale = true;
const again = await whoami();
say({ refreshed: tokens.refresh_token !== first.refresh_token
  && tokens.access_token !== first.access_token, whoami: again });

const origin = new URL(url).origin;
const form = (fields) => ({ method: 'POST', body: new URLSearchParams(fields),
  headers: { 'content-type': 'application/x-www-form-urlencoded' } });
await fetch(`${origin}/oauth/revoke`, form({
  token: tokens.refresh_token, token_type_hint: 'refresh_token', client_id: info.client_id }));
const listed = await fetch(url, {
  method: 'POST',
  headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json',
    accept: 'application/json, text/event-stream', 'mcp-method': 'tools/list',
    'mcp-protocol-version': '2026-07-28' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: { _meta: {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {} } } }),
});
const refreshed = await fetch(`${origin}/oauth/token`, form({
  grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: info.client_id }));
say({ revoked: { access: listed.status, refresh: (await refreshed.json()).error } });
await client.close();
process.exit(0);
