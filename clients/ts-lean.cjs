// ts-lean.cjs BOX_URL BARE_URL KEY CALLS BLOCK WARM WORDS... — the official TypeScript SDK timing
// memory_search on box serve and on a bare server: one client connects to each (initialize, tools/list);
// then for each WORDS, CALLS timed calls to each, one at a time, in blocks of BLOCK back-to-back calls to
// one server, the blocks alternating between the two (and which goes first), so a busy moment of the
// machine falls on both alike while each call still follows one to the same server at once. The first
// WARM calls of each block are not timed. Prints one JSON line: {"box": {"WORDS": [ms, ...], ...}, "bare": {...}}. Used by bench/mcp.
// Run through scripts/node.sh, which puts Node 22+ and the packages of clients/package.json on NODE_PATH.
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

async function connect(url, key) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'ts-lean', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  return client;
}

async function timed(client, words) {
  const t = process.hrtime.bigint();
  const r = await client.callTool({ name: 'memory_search', arguments: { words } });
  const d = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.isError) throw new Error(`memory_search ${words}: ${r.content.map((c) => c.text).join('')}`);
  return d;
}

async function main() {
  const [boxURL, bareURL, key, calls, block, warm, ...queries] = process.argv.slice(2);
  const clients = { box: await connect(boxURL, key), bare: await connect(bareURL, key) };
  const out = { box: {}, bare: {} };
  for (const words of queries) {
    out.box[words] = [];
    out.bare[words] = [];
    for (let b = 0; out.box[words].length < Number(calls); b++) {
      const order = b % 2 === 0 ? ['box', 'bare'] : ['bare', 'box'];
      for (const name of order) {
        for (let i = 0; i < Number(block); i++) {
          const d = await timed(clients[name], words);
          if (i >= Number(warm) && out[name][words].length < Number(calls)) out[name][words].push(d);
        }
      }
    }
  }
  console.log(JSON.stringify(out));
  await clients.box.close();
  await clients.bare.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
