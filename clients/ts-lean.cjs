// ts-lean.cjs URL KEY CALLS WORDS... — the official TypeScript SDK timing memory_search: one client connects
// (initialize, tools/list), then for each WORDS makes 5 warm-up calls and CALLS timed calls, one at a time.
// Prints one JSON line: {"WORDS": [ms, ...], ...}. Used by bench/mcp to compare box serve with a bare server.
// Run through scripts/node.sh, which puts Node 22+ and the packages of clients/package.json on NODE_PATH.
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

async function main() {
  const [url, key, calls, ...queries] = process.argv.slice(2);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'ts-lean', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  const out = {};
  for (const words of queries) {
    const lat = [];
    for (let i = 0; i < Number(calls) + 5; i++) {
      const t = process.hrtime.bigint();
      const r = await client.callTool({ name: 'memory_search', arguments: { words } });
      const d = Number(process.hrtime.bigint() - t) / 1e6;
      if (r.isError) throw new Error(`memory_search ${words}: ${r.content.map((c) => c.text).join('')}`);
      if (i >= 5) lat.push(d);
    }
    out[words] = lat;
  }
  console.log(JSON.stringify(out));
  await client.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
