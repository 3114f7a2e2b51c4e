// Inspect: one memory with every field SPEC §2 records, its supersede chain and its
// redaction marks, plus the two corrections that start from one memory.

import { ApiError, rest } from './api.js';
import { $, confirmDialog, fail, h, refButton, say, sourceText, temporaryText, when } from './dom.js';
import { redactionKinds, withRedactions } from './marks.js';

function row(label, ...value) {
  return [h('dt', {}, label), h('dd', { 'data-field': label }, ...value)];
}

async function chain(memory) {
  // What this memory replaced, as far back as the API still returns (a superseded memory
  // stops being returned), and what replaced it.
  const back = [];
  let ref = memory.supersedes;
  while (ref && back.length < 20) {
    try {
      const older = (await rest.get(ref)).memory;
      back.push(h('li', {}, 'replaced ', refButton(ref), ` (${when(older.created_at)})`));
      ref = older.supersedes;
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
      back.push(h('li', {}, `replaced ${ref} — no longer returned (a superseded memory is hidden from every read)`));
      break;
    }
  }
  const forward = memory.superseded_by
    ? h('li', {}, 'replaced by ', refButton(memory.superseded_by))
    : h('li', {}, 'not replaced: this is the current version');
  return h('ul', { class: 'chain' }, forward, ...back, back.length ? null : h('li', {}, 'replaced nothing'));
}

export async function inspect(reference) {
  $('#inspect-reference').value = reference;
  const body = $('#inspect-body');
  try {
    const m = (await rest.get(reference)).memory;
    const kinds = redactionKinds([m.content, m.title, m.location].join('\n'));
    body.replaceChildren(
      h('article', { class: 'memory', 'data-reference': m.reference },
        h('h3', {}, m.title || m.reference),
        h('pre', { class: 'content' }, withRedactions(m.content)),
        h('dl', { class: 'fields' },
          row('reference', m.reference), row('type', m.type), row('title', m.title ? withRedactions(m.title) : '—'),
          row('location', withRedactions(m.location)), row('bucket', m.bucket), row('owner', m.owner),
          row('team', m.team || '—'), row('project', m.project || '—'), row('tags', (m.tags || []).join(', ') || '—'),
          row('boundary', m.boundary), row('source', sourceText(m.source) || '—'),
          row('created_at', when(m.created_at)), row('updated_at', when(m.updated_at)),
          row('temporary', temporaryText(m)), row('expires_at', m.expires_at ? when(m.expires_at) : '—'),
          row('supersedes', m.supersedes || '—'), row('superseded_by', m.superseded_by || '—'),
          row('content_sha256', h('code', {}, m.content_sha256)),
          row('redactions', kinds.length ? `${kinds.length} kind(s): ${kinds.join(', ')}` : 'none'),
          row('embedding', 'stored with the memory, never returned by the API')),
        h('h4', {}, 'Supersede chain'), await chain(m),
        h('div', { class: 'actions' },
          h('button', { type: 'button', class: 'primary', onclick: () => correct(m) }, 'Supersede with a correction…'),
          h('button', { type: 'button', class: 'danger', id: 'forget-one', onclick: () => forgetOne(m) }, 'Forget this memory…'))));
    say(`Inspect: ${m.reference}.`);
  } catch (error) {
    body.replaceChildren(h('p', { class: 'empty' }, 'Nothing to show.'));
    fail(error);
  }
}

function correct(memory) {
  const form = $('#supersede-form');
  form.elements.reference.value = memory.reference;
  form.elements.content.value = memory.content;
  document.dispatchEvent(new CustomEvent('xmemo:view', { detail: 'correct' }));
  form.elements.content.focus();
}

async function forgetOne(memory) {
  if (!(await confirmDialog(`Forget ${memory.reference} (${memory.type}, ${memory.location})? This cannot be undone.`))) {
    say('Nothing was forgotten.');
    return;
  }
  try {
    const { deleted } = await rest.forgetOne(memory.reference);
    $('#inspect-body').replaceChildren(h('p', { class: 'result', id: 'forget-one-result' }, `Forgotten: ${memory.reference} (deleted ${deleted}).`));
    say(`Deleted: ${deleted}`);
  } catch (error) {
    fail(error);
  }
}

export function setup() {
  $('#inspect-form').addEventListener('submit', (event) => {
    event.preventDefault();
    inspect($('#inspect-reference').value.trim());
  });
}
