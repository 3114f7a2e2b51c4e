// Find: one query, both retrieval modes side by side — tolerant `recall` and strict
// `search_memory` — with the query terms each hit matched highlighted.

import { rest } from './api.js';
import { $, fail, h, refButton, say } from './dom.js';
import { highlighted } from './marks.js';

function hit(result, query, tolerant) {
  const { node, matched } = highlighted(result.content, query, tolerant);
  return h('li', { class: 'hit', 'data-reference': result.reference },
    h('div', { class: 'meta' }, refButton(result.reference), ` ${result.type} · ${result.location} · ${result.boundary}`,
      h('span', { class: 'score' }, ` score ${result.score.toFixed(3)}`)),
    h('p', { class: 'content' }, node),
    h('p', { class: 'matched' }, matched.length ? `matched: ${matched.join(', ')}` : 'no query term literally present'));
}

function show(column, results, query, tolerant) {
  const list = $(`${column} .hits`);
  list.replaceChildren(...results.map((r) => hit(r, query, tolerant)));
  if (!results.length) list.append(h('li', { class: 'empty' }, 'No matching XMemo memory was found.'));
}

export async function find(query) {
  try {
    const [recall, search] = await Promise.all([rest.recall({ query, limit: 10 }), rest.search({ query, limit: 10 })]);
    show('#find-recall', recall.results, query, true);
    show('#find-search', search.results, query, false);
    say(`Find: recall ${recall.results.length}, search_memory ${search.results.length}.`);
  } catch (error) {
    fail(error);
  }
}

export function setup() {
  $('#find-form').addEventListener('submit', (event) => {
    event.preventDefault();
    find($('#find-query').value.trim());
  });
}
