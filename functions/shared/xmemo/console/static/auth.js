// Signing in: a token in the URL fragment (what `make run` prints; a fragment never reaches
// any server) is read once and cleared from the address bar; on AWS the hosted login with
// the public interactive client, authorization code + PKCE (S256).
//
// Only the PKCE verifier and state cross the redirect, in sessionStorage (this tab only),
// and are removed as soon as the code is exchanged. The token itself stays in memory (api.js).

const PKCE_KEY = 'xmemo.console.pkce';

function base64url(bytes) {
  return btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomString(size = 48) {
  return base64url(crypto.getRandomValues(new Uint8Array(size)));
}

function redirectUri() {
  return location.origin + location.pathname;
}

export function takeFragmentToken() {
  const match = location.hash.match(/(?:^#|&)token=([^&]+)/);
  if (!match) return null;
  history.replaceState(null, '', location.pathname + location.search);
  return decodeURIComponent(match[1]);
}

export async function startHostedLogin(login) {
  const verifier = randomString();
  const state = randomString(24);
  sessionStorage.setItem(PKCE_KEY, JSON.stringify({ verifier, state }));
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const url = new URL(login.authorize_url);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: login.client_id,
    redirect_uri: redirectUri(),
    scope: login.scopes.join(' '),
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.toString());
}

export async function finishHostedLogin(login) {
  // The access token, if this page load is the hosted login's redirect back; else null.
  const params = new URLSearchParams(location.search);
  const code = params.get('code');
  if (!code && !params.get('error')) return null;
  const saved = JSON.parse(sessionStorage.getItem(PKCE_KEY) || 'null');
  sessionStorage.removeItem(PKCE_KEY);
  history.replaceState(null, '', location.pathname);
  if (params.get('error')) throw new Error(`sign-in failed: ${params.get('error')}`);
  if (!saved || saved.state !== params.get('state')) throw new Error('sign-in failed: state mismatch');
  const response = await fetch(login.token_url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: login.client_id,
      code,
      redirect_uri: redirectUri(),
      code_verifier: saved.verifier,
    }),
    credentials: 'omit',
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok || !data.access_token) throw new Error(`sign-in failed: ${data.error || response.status}`);
  return data.access_token;
}
