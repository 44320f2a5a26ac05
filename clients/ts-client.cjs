// ts-client.cjs URL KEY — the official TypeScript SDK against a box: initialize, list tools, add and list a
// to-do, search memory. Prints one JSON summary on stdout; exits 1 on any protocol failure.
// Run through scripts/node.sh, which puts Node 22+ and the packages of clients/package.json on NODE_PATH.
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

async function main() {
  const [url, key] = process.argv.slice(2);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'ts-sdk-client', version: '1.0.0' });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    return { isError: !!r.isError, text: r.content.map((c) => c.text).join('') };
  };
  const out = {
    server: client.getServerVersion(),
    instructions: client.getInstructions(),
    tools,
    add: await call('todos_add', { text: 'Water the plants', list: 'garden' }),
    list: await call('todos_list', {}),
    search: await call('memory_search', { words: 'plants' }),
    denied: await call('list_builds', {}),
  };
  console.log(JSON.stringify(out));
  await client.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
