// Correct: forget a filtered set (the count first, then a confirmation), supersede a memory
// with a corrected one, export everything visible as JSON Lines.

import { everyMemory, hasScope, rest } from './api.js';
import { $, confirmDialog, fail, formFilters, h, refButton, say } from './dom.js';

async function forgetWhere(form) {
  const filters = formFilters(form);
  const result = $('#forget-result');
  if (!Object.keys(filters).length) {
    result.textContent = 'Choose at least one filter.';
    return;
  }
  try {
    // The count the person confirms: visible memories matching the same filters (the delete
    // also takes the older versions they superseded, which no read returns).
    let count = 0;
    const listed = hasScope('memory:temporary') ? { ...filters, include_temporary: true } : filters;
    for await (const _memory of everyMemory(listed)) count += 1;
    if (!count) {
      result.textContent = 'No visible memory matches; nothing to forget.';
      return;
    }
    const what = Object.entries(filters).map(([k, v]) => `${k}=${[].concat(v).join(',')}`).join(' ');
    if (!(await confirmDialog(`Forget ${count} memor${count === 1 ? 'y' : 'ies'} matching ${what}? This cannot be undone.`, `Forget ${count}`))) {
      result.textContent = 'Nothing was forgotten.';
      return;
    }
    const { deleted } = await rest.forgetWhere(filters);
    result.textContent = `Deleted: ${deleted}`;
    say(`Deleted: ${deleted}`);
  } catch (error) {
    fail(error);
  }
}

async function supersede(form) {
  const result = $('#supersede-result');
  try {
    const old = (await rest.get(form.elements.reference.value.trim())).memory;
    const body = { content: form.elements.content.value, type: old.type, location: old.location, bucket: old.bucket,
      tags: old.tags, supersedes: old.reference };
    for (const key of ['title', 'team', 'project']) if (old[key]) body[key] = old[key];
    const stored = await rest.remember(body);
    result.replaceChildren(`Saved ${stored.duplicate ? '(duplicate of) ' : ''}`, refButton(stored.memory.reference), ` replacing ${old.reference}.`,
      stored.redacted.length ? ` Redacted: ${stored.redacted.join(', ')}.` : '');
    say(`Superseded ${old.reference}.`);
  } catch (error) {
    fail(error);
  }
}

async function exportVisible() {
  try {
    const lines = [];
    const filters = hasScope('memory:temporary') ? { include_temporary: true } : {};
    for await (const memory of everyMemory(filters)) lines.push(JSON.stringify(memory));
    const blob = new Blob(lines.map((l) => `${l}\n`), { type: 'application/x-ndjson' });
    const link = h('a', { href: URL.createObjectURL(blob), download: `xmemo-export-${new Date().toISOString().slice(0, 10)}.jsonl` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    $('#export-result').textContent = `Exported ${lines.length} memories.`;
  } catch (error) {
    fail(error);
  }
}

export function setup() {
  $('#forget-form').addEventListener('submit', (event) => { event.preventDefault(); forgetWhere(event.target); });
  $('#supersede-form').addEventListener('submit', (event) => { event.preventDefault(); supersede(event.target); });
  $('#export-button').addEventListener('click', exportVisible);
}
