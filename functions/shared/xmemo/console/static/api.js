// The only way the console reaches data: the REST API (and the public MCP profile for the
// exact text an agent receives), always with the signed-in person's own token.
//
// The token lives in this module's memory only: not in localStorage, sessionStorage or a
// cookie, so no other page (nor another tab of this origin) can read it, and closing or
// reloading the tab forgets it.

let token = null;

// The API's path prefix: '' locally, '/<stage>' on an execute-api URL.
const BASE = location.pathname.replace(/\/console\/?$/, '');

export class ApiError extends Error {
  constructor(status, code, message) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
  }
}

export function signIn(value) { token = value; }
export function signOut() { token = null; }
export function signedIn() { return token !== null; }

export function claims() {
  // For display only (who is signed in, which scopes): the API verifies the token itself.
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(part), (c) => c.charCodeAt(0))));
  } catch {
    return {};
  }
}

export function hasScope(name) {
  return String(claims().scope || '').split(' ').some((s) => s.endsWith(`/${name}`));
}

async function call(method, path, { body, query, headers } = {}) {
  const url = new URL(BASE + path, location.origin);
  for (const [key, value] of Object.entries(query || {})) {
    if (value === undefined || value === null) continue;
    for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(key, String(v));
  }
  const response = await fetch(url, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      Accept: 'application/json',
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...(headers || {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
    cache: 'no-store',
    credentials: 'omit',
    referrerPolicy: 'no-referrer',
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const error = (data && data.error) || {};
    throw new ApiError(response.status, error.code || 'error', error.message || response.statusText);
  }
  return data;
}

export const rest = {
  list: (filters, cursor, limit = 25) => call('GET', '/v1/memories', { query: { ...filters, cursor, limit } }),
  get: (reference) => call('GET', `/v1/memories/${encodeURIComponent(reference)}`),
  recall: (body) => call('POST', '/v1/recall', { body }),
  search: (body) => call('POST', '/v1/search', { body }),
  context: (body) => call('POST', '/v1/context', { body }),
  remember: (body) => call('POST', '/v1/memories', { body }),
  forgetOne: (reference) => call('DELETE', `/v1/memories/${encodeURIComponent(reference)}`),
  forgetWhere: (filters) => call('POST', '/v1/forget', { body: filters }),
};

export async function* everyMemory(filters) {
  // Every visible memory matching `filters`, page by page (newest first).
  let cursor;
  do {
    const page = await rest.list(filters, cursor, 100);
    yield* page.memories;
    cursor = page.next_cursor;
  } while (cursor);
}

export async function publicContext(args) {
  // The exact text an agent receives from recall_context: the public MCP profile's answer.
  // The REST route returns the structured pack only; this reuses the MCP endpoint as is.
  const data = await call('POST', '/mcp', {
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'recall_context', arguments: args } },
    headers: { 'MCP-Protocol-Version': '2025-06-18' },
  });
  if (data.error) throw new ApiError(200, 'mcp', data.error.message);
  const text = (data.result.content || []).map((c) => c.text).join('');
  if (data.result.isError) throw new ApiError(200, 'mcp', text);
  return text;
}
