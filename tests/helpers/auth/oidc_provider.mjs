// node-oidc-provider (an independent, certified OpenID Provider) as the tests' second
// authorization server: `node oidc_provider.mjs` listens on 127.0.0.1 (a free port) and prints
// one JSON line, {"issuer": ...}, once it accepts connections.
//
// What it offers is what an MCP client meets in the field: the authorization code flow with
// PKCE and RFC 9207 `iss`, its own login and consent pages (devInteractions: any login name
// and password sign in), refresh tokens rotated on every use, Dynamic Client Registration
// (open), Client ID Metadata Documents, client credentials, private_key_jwt, introspection,
// revocation, and DPoP with nonces. Access tokens are issued per resource (RFC 8707): JWTs
// signed ES256 (`typ` at+jwt, `aud` the MCP server's URL), or opaque ones for a resource the
// test names (POST /test/opaque {"resource": URL}), checked by introspection.
//
// Settings from the environment (the fixture in oidc_process.py sets them):
//   OIDC_TTL            access token lifetime in seconds (default 600)
//   OIDC_DPOP_NONCE     "1": the token endpoint asks DPoP proofs for its nonce
//   OIDC_SCOPES         the scopes the resources grant, space-separated
//   NODE_EXTRA_CA_CERTS the test certificate authority, for the HTTPS client metadata documents
//   OIDC_UPSTREAM       a JSON client ({client_id, client_secret, redirect_uris}): the provider
//                       is an upstream identity provider as GitHub or Google are to an MCP
//                       client, with no registration (neither DCR nor client metadata
//                       documents), that one pre-registered confidential client, and claims
//                       for the scopes email, profile and groups (userinfo and ID token)
// Every outgoing fetch (CIMD) may reach 127.0.0.1: the tests serve the documents there, so the
// provider's own refusal of loopback targets is lifted for them, and for them only.
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';

import Provider from 'oidc-provider';
import * as jose from 'jose';

const ttl = Number(process.env.OIDC_TTL || 600);
const scopes = (process.env.OIDC_SCOPES
  || 'mcp:read mcp:admin calendar:read calendar:write').split(' ').filter(Boolean);
const opaque = new Set();
const upstream = process.env.OIDC_UPSTREAM ? JSON.parse(process.env.OIDC_UPSTREAM) : null;

async function signingKeys() {
  const keys = [];
  for (const alg of ['ES256', 'RS256']) {
    const { privateKey } = await jose.generateKeyPair(alg, { extractable: true });
    const jwk = await jose.exportJWK(privateKey);
    keys.push({ ...jwk, alg, use: 'sig', kid: `${alg.toLowerCase()}-${randomBytes(4).toString('hex')}` });
  }
  return keys;
}

const server = createServer();
await new Promise((resolve) => { server.listen(0, '127.0.0.1', resolve); });
const issuer = `http://127.0.0.1:${server.address().port}`;

const upstreamSettings = upstream ? {
  clients: [{ ...upstream, grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'],
    groups: ['groups'] },
  scopes: ['openid', 'offline_access', 'email', 'profile', 'groups'],
  findAccount: async (_ctx, id) => ({
    accountId: id,
    claims: async () => ({ sub: id, email: `${id}@example.test`, email_verified: true,
      name: id.charAt(0).toUpperCase() + id.slice(1), groups: ['staff', `team-${id}`] }),
  }),
} : {};

const provider = new Provider(issuer, {
  jwks: { keys: await signingKeys() },
  cookies: { keys: [randomBytes(16).toString('hex')] },
  scopes: ['openid', 'offline_access', ...scopes],
  findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  ...upstreamSettings,
  clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'client_secret_jwt',
    'private_key_jwt', 'none'],
  // HS256 first, as this provider lists it by default: a private key fits none of them.
  clientAuthSigningAlgValues: ['HS256', 'RS256', 'PS256', 'ES256', 'EdDSA'],
  ttl: { AccessToken: ttl, ClientCredentials: ttl, RefreshToken: 86400, Grant: 86400, Session: 3600 },
  rotateRefreshToken: true,
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: !upstream },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    dPoP: {
      enabled: true,
      ...(process.env.OIDC_DPOP_NONCE === '1'
        ? { nonceSecret: randomBytes(32), requireNonce: () => true } : {}),
    },
    clientIdMetadataDocument: { enabled: !upstream, ack: 'draft-02' },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, resource) => {
        const url = new URL(resource);
        if (url.hostname !== '127.0.0.1') throw new Error(`not a test resource: ${resource}`);
        return opaque.has(resource)
          ? { scope: scopes.join(' '), audience: resource, accessTokenTTL: ttl, accessTokenFormat: 'opaque' }
          : {
            scope: scopes.join(' '),
            audience: resource,
            accessTokenTTL: ttl,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
      },
    },
  },
  // The provider refuses fetches to special-use addresses (loopback among them); the client
  // metadata documents the tests serve are on 127.0.0.1, so its own dispatcher is left out.
  fetch: async (url, options) => {
    const { dispatcher, ...rest } = options;
    return globalThis.fetch(url, rest);
  },
});
provider.proxy = false;

// The test's own admin route: which resources get opaque (introspected) tokens.
provider.use(async (ctx, next) => {
  if (ctx.path === '/test/opaque' && ctx.method === 'POST') {
    let body = '';
    for await (const chunk of ctx.req) body += chunk;
    opaque.add(JSON.parse(body).resource);
    ctx.body = { opaque: [...opaque] };
    return undefined;
  }
  return next();
});

server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => { server.close(); process.exit(0); });
}
