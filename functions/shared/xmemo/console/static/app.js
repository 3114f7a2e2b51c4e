// The console's wiring: sign-in, the section tabs, and the hand-offs between sections.

import * as api from './api.js';
import { finishHostedLogin, startHostedLogin, takeFragmentToken } from './auth.js';
import * as browse from './browse.js';
import * as budget from './budget.js';
import * as correct from './correct.js';
import { $, clearAlert, fail, h, say } from './dom.js';
import * as find from './find.js';
import * as inspect from './inspect.js';

const VIEWS = ['browse', 'find', 'inspect', 'budget', 'correct'];

function show(view) {
  clearAlert();
  for (const name of ['signin', ...VIEWS]) $(`#view-${name}`).hidden = name !== view;
  for (const tab of document.querySelectorAll('#tabs button')) {
    if (tab.dataset.view === view) tab.setAttribute('aria-current', 'page');
    else tab.removeAttribute('aria-current');
  }
}

function signedIn(token) {
  api.signIn(token);
  const c = api.claims();
  const scopes = String(c.scope || '').split(' ').map((s) => s.split('/').pop()).join(', ');
  $('#who-name').textContent = `${c.username || c.sub || 'signed in'} (${scopes})`;
  $('#who').hidden = false;
  $('#tabs').hidden = false;
  for (const el of document.querySelectorAll('.temporary-only')) el.hidden = !api.hasScope('memory:temporary');
  $('#browse-form').reset(); // another person: no filters carried over
  show('browse');
  browse.refresh();
}

function signedOut(message) {
  api.signOut();
  say('');
  $('#who').hidden = true;
  $('#tabs').hidden = true;
  show('signin');
  if (message) fail(message);
}

async function config() {
  // How to sign in, and the memory types (models.MEMORY_TYPES, not a copy kept here).
  const response = await fetch('console/config.json', { cache: 'no-store', credentials: 'omit' });
  if (!response.ok) throw new Error(`the console's configuration did not load (${response.status})`);
  return response.json();
}

async function start() {
  const settings = await config();
  for (const select of document.querySelectorAll('.type-select')) {
    select.replaceChildren(h('option', { value: '' }, 'any'), ...settings.types.map((t) => h('option', { value: t }, t)));
  }
  for (const view of [browse, find, inspect, budget, correct]) view.setup();
  for (const tab of document.querySelectorAll('#tabs button')) tab.addEventListener('click', () => show(tab.dataset.view));
  document.addEventListener('xmemo:view', (event) => show(event.detail));
  document.addEventListener('xmemo:open', (event) => { show('inspect'); inspect.inspect(event.detail); });
  $('#sign-out').addEventListener('click', () => { signedOut(); say('Signed out.'); });
  $('#signin-token').addEventListener('submit', (event) => {
    event.preventDefault();
    const token = $('#token-input').value.trim();
    $('#token-input').value = '';
    if (token) signedIn(token);
  });
  // A 401 anywhere (expired or revoked token) sends the person back to sign in (dom.fail).
  document.addEventListener('xmemo:unauthorized', (event) => signedOut(event.detail));

  if (settings.login) {
    $('#signin-hosted').hidden = false;
    $('#signin-hosted-button').addEventListener('click', () => startHostedLogin(settings.login).catch(fail));
  }
  const token = takeFragmentToken() || (settings.login ? await finishHostedLogin(settings.login).catch((e) => { fail(e); return null; }) : null);
  if (token) signedIn(token);
  else show('signin');
  // A link with another token opened in this tab changes only the fragment: no reload.
  window.addEventListener('hashchange', () => {
    const next = takeFragmentToken();
    if (next) signedIn(next);
  });
}

start().catch(fail);
