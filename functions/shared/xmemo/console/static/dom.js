// Small DOM helpers. Nothing here parses markup: text always becomes text nodes, so stored
// memories can never turn into HTML (the CSP's Trusted Types would refuse it anyway).

export const $ = (selector, root = document) => root.querySelector(selector);

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** The start of a memory's text on one line, so a table row says what the memory is. */
export function excerpt(text, length = 160) {
  const line = String(text || '').replace(/\s+/g, ' ').trim();
  return line.length > length ? `${line.slice(0, length - 1)}…` : line;
}

export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace('T', ' ').slice(0, 19) + 'Z';
}

export function formFilters(form) {
  // Non-empty fields of a filter form as API parameters (tags split on commas).
  const out = {};
  for (const [name, raw] of new FormData(form).entries()) {
    const value = String(raw).trim();
    if (!value) continue;
    if (name === 'tags') out.tags = value.split(',').map((t) => t.trim()).filter(Boolean);
    else if (name === 'include_temporary') out.include_temporary = true;
    else out[name] = value;
  }
  return out;
}

const alertBox = () => document.getElementById('alert');

export function say(text) {
  document.getElementById('status').textContent = text;
}

export function fail(error) {
  if (error && error.status === 401) {
    document.dispatchEvent(new CustomEvent('xmemo:unauthorized', { detail: `Please sign in again (${error.message}).` }));
    return;
  }
  const box = alertBox();
  box.textContent = error && error.message ? error.message : String(error);
  box.hidden = false;
}

export function clearAlert() {
  alertBox().hidden = true;
  alertBox().textContent = '';
}

export function confirmDialog(text, okLabel = 'Forget') {
  // A modal <dialog>: keyboard-reachable, Escape cancels, Cancel has the focus first.
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = okLabel;
  dialog.returnValue = 'cancel';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.showModal();
  });
}

export function open(reference) {
  // Ask the console to show one memory in Inspect (app.js listens).
  document.dispatchEvent(new CustomEvent('xmemo:open', { detail: reference }));
}

export function refButton(reference) {
  return h('button', { type: 'button', class: 'ref', 'data-reference': reference, onclick: () => open(reference) }, reference);
}

export function sourceText(source) {
  const s = source || {};
  return [s.client_id, s.agent && `agent ${s.agent}`, s.session && `session ${s.session}`].filter(Boolean).join(' · ');
}

export function temporaryText(memory) {
  return memory.temporary ? `yes, expires ${when(memory.expires_at)}` : 'no';
}
