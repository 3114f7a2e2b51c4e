// The official TypeScript SDK against an XMemo gateway, the way its own example client
// (examples/client/simpleOAuthClient.js) connects: the SDK's example provider
// InMemoryOAuthClientProvider, unchanged (it has no state() method), a callback listener on a
// loopback port, Client + StreamableHTTPClientTransport, and on 401 the transport's own auth().
// Only the person's part is done here: open the authorization URL, sign in on the form.
// Prints one JSON object per step on stdout; tests/interop/test_typescript_sdk.py judges them.
import { createServer } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { InMemoryOAuthClientProvider } from "@modelcontextprotocol/sdk/examples/client/simpleOAuthClientProvider.js";

const [serverUrl, user, password, authMethod, waitSeconds] = process.argv.slice(2);
const step = (name, fields = {}) => console.log(JSON.stringify({ step: name, ...fields }));

// the example's callback server, on a free port instead of its fixed 8090
const codes = [];
const waiting = [];
const listener = createServer((req, res) => {
  const url = new URL(req.url, "http://localhost");
  const code = url.searchParams.get("code");
  res.writeHead(code ? 200 : 400, { "Content-Type": "text/plain" }).end(code ? "signed in" : "no code");
  if (code) (waiting.shift() ?? (c => codes.push(c)))(code);
});
await new Promise(resolve => listener.listen(0, "127.0.0.1", resolve));
const callbackUrl = `http://localhost:${listener.address().port}/callback`;
const nextCode = () => new Promise(resolve => (codes.length ? resolve(codes.shift()) : waiting.push(resolve)));

// what a person does in the browser: the login form, then the redirect to the callback
async function signIn(authorizationUrl) {
  step("authorize", { has_state: authorizationUrl.searchParams.has("state"),
                      code_challenge_method: authorizationUrl.searchParams.get("code_challenge_method") });
  const page = await fetch(authorizationUrl);
  const form = /name="txn" value="([^"]+)"/.exec(await page.text());
  if (!form) throw new Error(`no login form (${page.status})`);
  const sent = await fetch(new URL(authorizationUrl.pathname, authorizationUrl), {
    method: "POST", redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: authorizationUrl.origin },
    body: new URLSearchParams({ txn: form[1], username: user, password }),
  });
  const location = sent.headers.get("location");
  if (!location) throw new Error(`the login form answered ${sent.status} without a redirect`);
  await fetch(location); // the browser follows the redirect to the client's listener
}

const redirects = [];
const provider = new InMemoryOAuthClientProvider(callbackUrl, {
  client_name: "Simple OAuth MCP Client", // the example's metadata, with the method under test
  redirect_uris: [callbackUrl],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: authMethod,
}, url => { redirects.push(url); signIn(url).catch(e => step("sign_in_failed", { message: String(e) })); });

async function connect() {
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
  const client = new Client({ name: "xmemo-interop", version: "1.0.0" });
  try {
    await client.connect(transport);
    return client;
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await transport.finishAuth(await nextCode()); // as the example does after its callback
    return connect();
  }
}

try {
  const client = await connect();
  const info = provider.clientInformation();
  step("registered", { method: info.token_endpoint_auth_method, has_secret: Boolean(info.client_secret) });
  const tools = (await client.listTools()).tools.map(t => t.name);
  step("tools", { names: tools });
  const text = r => r.content.map(c => c.text).join("\n");
  const stored = await client.callTool({ name: "remember", arguments: {
    content: `The interop suite runs the TypeScript SDK against the local gateway (${authMethod}).`, type: "fact" } });
  step("remember", { text: text(stored), is_error: Boolean(stored.isError) });
  const before = provider.tokens();
  await new Promise(resolve => setTimeout(resolve, Number(waitSeconds) * 1000)); // the access token expires
  const found = await client.callTool({ name: "recall", arguments: { query: "TypeScript SDK interop suite" } });
  const after = provider.tokens();
  step("recall", { text: text(found), is_error: Boolean(found.isError),
                   new_access_token: after.access_token !== before.access_token,
                   rotated_refresh_token: after.refresh_token !== before.refresh_token,
                   sign_ins: redirects.length });
  await client.close();
} catch (error) {
  step("failed", { message: String(error?.stack ?? error) });
  process.exitCode = 1;
} finally {
  listener.close();
}
