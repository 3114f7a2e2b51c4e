// Browse: the visible memories as a table, what each says first, filtered by the API (type,
// bucket, team, project, tags, temporary), paged with the API's cursor; "narrow this page"
// filters the loaded page by content, location, source, boundary or created time
// (GET /v1/memories has no such filters).

import { rest } from './api.js';
import { $, excerpt, fail, formFilters, h, refButton, say, sourceText, temporaryText, when } from './dom.js';

const PAGE = 25;
let cursors = [null]; // cursor of each page seen; the last one is the current page's
let nextCursor = null;
let rows = [];

function render() {
  const needle = $('#browse-narrow').value.trim().toLowerCase();
  const shown = rows.filter((m) => !needle
    || [m.title, m.content, m.location, m.boundary, sourceText(m.source), when(m.created_at)].some((v) => (v || '').toLowerCase().includes(needle)));
  const body = $('#browse-table tbody');
  body.replaceChildren(...shown.map((m) => h('tr', {},
    h('td', { 'data-label': 'Reference' }, refButton(m.reference)),
    h('td', { 'data-label': 'Memory', class: 'content' }, m.title ? h('strong', {}, `${m.title} `) : null, excerpt(m.content)),
    h('td', { 'data-label': 'Type' }, m.type),
    h('td', { 'data-label': 'Location' }, m.location),
    h('td', { 'data-label': 'Boundary' }, m.boundary),
    h('td', { 'data-label': 'Created' }, when(m.created_at)),
    h('td', { 'data-label': 'Source' }, sourceText(m.source)),
    h('td', { 'data-label': 'Temporary' }, temporaryText(m)))));
  if (!shown.length) body.append(h('tr', {}, h('td', { colspan: 8, class: 'empty' }, 'No memories here.')));
  $('#browse-page').textContent = `Page ${cursors.length} · ${shown.length} of ${rows.length} shown`;
  $('#browse-prev').disabled = cursors.length <= 1;
  $('#browse-next').disabled = !nextCursor;
}

async function load() {
  try {
    const page = await rest.list(formFilters($('#browse-form')), cursors[cursors.length - 1], PAGE);
    rows = page.memories;
    nextCursor = page.next_cursor;
    render();
    say(`Browse: ${rows.length} memories on page ${cursors.length}.`);
  } catch (error) {
    fail(error);
  }
}

export function refresh() {
  cursors = [null];
  return load();
}

export function setup() {
  $('#browse-form').addEventListener('submit', (event) => { event.preventDefault(); refresh(); });
  $('#browse-narrow').addEventListener('input', render);
  $('#browse-next').addEventListener('click', () => { cursors.push(nextCursor); load(); });
  $('#browse-prev').addEventListener('click', () => { cursors.pop(); load(); });
}
