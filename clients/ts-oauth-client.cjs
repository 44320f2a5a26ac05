// ts-oauth-client.cjs URL — the official TypeScript SDK connecting to a box with OAuth, as a new user's app
// would: it finds the box from the 401, registers itself (a loopback redirect), and prints
//   AUTHORIZE <url>      the address to open in the owner's browser (the box's consent page follows)
// then waits for the redirect on its own loopback server, trades the code, reconnects, lists the tools,
// refreshes its token once and prints
//   RESULT <json>        {tools, scope, refreshed, iss, issuer}: iss from the redirect, issuer as discovered
// Exits 1 on any failure. Run through scripts/node.sh (Node 22+, the packages of clients/package.json).
const http = require('node:http');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { UnauthorizedError, refreshAuthorization, discoverAuthorizationServerMetadata } = require('@modelcontextprotocol/sdk/client/auth.js');

async function main() {
  const url = new URL(process.argv[2]);
  let resolveRedirect;
  const redirected = new Promise((r) => { resolveRedirect = r; });
  const cb = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://127.0.0.1');
    res.end('You can close this window.');
    resolveRedirect(u.searchParams);
  });
  await new Promise((r) => cb.listen(0, '127.0.0.1', r));
  const redirectUrl = `http://127.0.0.1:${cb.address().port}/callback`;

  const store = {};
  const provider = {
    get redirectUrl() { return redirectUrl; },
    get clientMetadata() {
      return { client_name: 'TypeScript SDK test', redirect_uris: [redirectUrl], token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], scope: 'memory.read memory.write' };
    },
    clientInformation: () => store.client,
    saveClientInformation: (c) => { store.client = c; },
    tokens: () => store.tokens,
    saveTokens: (t) => { store.tokens = t; },
    redirectToAuthorization: (u) => { console.log('AUTHORIZE ' + u.toString()); },
    saveCodeVerifier: (v) => { store.verifier = v; },
    codeVerifier: () => store.verifier,
  };

  const connect = async () => {
    const client = new Client({ name: 'ts-sdk-oauth', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    return client;
  };
  try {
    await connect();
    throw new Error('connected without authorizing');
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  const params = await redirected;
  if (params.get('error')) throw new Error('authorization refused: ' + params.get('error') + ' ' + params.get('error_description'));
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await transport.finishAuth(params.get('code'));
  const client = new Client({ name: 'ts-sdk-oauth', version: '1.0.0' });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  await client.close();

  // One rotation by hand, as the SDK does when the access token expires.
  const meta = await discoverAuthorizationServerMetadata(new URL(url.origin));
  const old = store.tokens.refresh_token;
  const fresh = await refreshAuthorization(meta.issuer, { metadata: meta, clientInformation: store.client, refreshToken: old,
    resource: new URL(url.href) });
  store.tokens = fresh;
  const again = await connect();
  const after = (await again.listTools()).tools.length;
  await again.close();
  cb.close();
  console.log('RESULT ' + JSON.stringify({ tools, scope: fresh.scope, refreshed: fresh.refresh_token !== old && after === tools.length,
    iss: params.get('iss'), issuer: meta.issuer, oldRefresh: old }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
