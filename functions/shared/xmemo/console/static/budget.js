// See the budget: the pack recall_context returns for a query and a token budget — each
// item's tokens as a bar against the budget, what was shortened, what was dropped and why —
// and the exact public text an agent receives (the public MCP profile's answer).
//
// Every number shown is the API's own (`budget`, `items[].tokens`, `retrieval_plan`); the
// console computes only the bar widths.

import { publicContext, rest } from './api.js';
import { $, fail, h, refButton, say } from './dom.js';

function bar(tokens, max, label) {
  const fill = h('span', { class: 'fill' });
  fill.style.width = `${Math.min(100, (100 * tokens) / max)}%`; // CSSOM, allowed by the CSP
  return h('span', { class: 'bar', role: 'img', 'aria-label': label }, fill);
}

function whyDropped(budget, plan) {
  const skipped = (plan.diversity && plan.diversity.skipped) || 0;
  const others = budget.dropped - skipped;
  const reasons = [];
  if (skipped) reasons.push(`${skipped} near-duplicate(s) of a packed memory (diversity threshold ${plan.diversity.threshold})`);
  if (others > 0) {
    reasons.push(budget.used_items >= budget.max_items
      ? `${others} matched after the pack reached max_items=${budget.max_items}`
      : `${others} did not fit in the tokens left (a part too small to be useful is not packed)`);
  }
  return reasons;
}

async function leftOut(query, budget, packed) {
  // The matching memories the pack left out, as recall ranks the same candidates (up to 20).
  if (!budget.dropped) return [];
  const limit = Math.min(20, budget.used_items + budget.dropped);
  const { results } = await rest.recall({ query, limit });
  return results.filter((r) => !packed.has(r.reference));
}

export async function pack(query, maxTokens, maxItems) {
  const args = { query, max_tokens: maxTokens, max_items: maxItems };
  try {
    // The public text comes from /mcp, which refuses browser origins it was not told about
    // (XMEMO_MCP_ALLOWED_ORIGINS, docs/console.md): then the pack is still shown, without it.
    const [result, text] = await Promise.all([rest.context(args), publicContext(args).catch((e) => e)]);
    const b = result.budget;
    const packed = new Set(result.items.map((i) => i.reference));
    const missing = await leftOut(query, b, packed);
    const reasons = whyDropped(b, result.retrieval_plan);
    $('#budget-body').replaceChildren(
      h('dl', { class: 'summary', id: 'budget-summary' },
        h('dt', {}, 'used_tokens'), h('dd', { 'data-field': 'used_tokens' }, `${b.used_tokens}`), h('dd', {}, `of ${b.max_tokens} (${b.encoding})`),
        h('dt', {}, 'used_items'), h('dd', { 'data-field': 'used_items' }, `${b.used_items}`), h('dd', {}, `of ${b.max_items}`),
        h('dt', {}, 'shortened'), h('dd', { 'data-field': 'shortened' }, `${b.shortened}`), h('dd', {}, ''),
        h('dt', {}, 'dropped'), h('dd', { 'data-field': 'dropped' }, `${b.dropped}`), h('dd', {}, '')),
      h('div', { class: 'total' }, bar(b.used_tokens, b.max_tokens, `${b.used_tokens} of ${b.max_tokens} tokens used`),
        ` ${b.used_tokens} / ${b.max_tokens} tokens`),
      h('ol', { class: 'pack', id: 'budget-items' }, ...result.items.map((item, n) => h('li', { 'data-reference': item.reference, 'data-tokens': item.tokens },
        h('div', { class: 'meta' }, `[${n + 1}] `, refButton(item.reference), ` ${item.type} · ${item.location}`,
          item.shortened ? h('span', { class: 'badge' }, 'shortened') : null),
        h('div', { class: 'row' }, bar(item.tokens, b.max_tokens, `${item.tokens} tokens`), h('span', { class: 'tokens' }, `${item.tokens} tokens`))))),
      h('h3', {}, 'Left out'),
      reasons.length
        ? h('ul', { class: 'reasons', id: 'budget-reasons' }, ...reasons.map((r) => h('li', {}, r)))
        : h('p', { id: 'budget-reasons' }, 'Nothing: every matching memory is in the pack, whole.'),
      missing.length ? h('ul', { class: 'left-out' }, ...missing.map((r) => h('li', {}, refButton(r.reference), ` ${r.type} · ${r.location}`))) : null,
      h('h3', {}, 'The exact text an agent receives'),
      text instanceof Error
        ? h('p', { class: 'empty', id: 'budget-public-missing' }, `The MCP endpoint did not give the text: ${text.message}`)
        : h('pre', { class: 'public', id: 'budget-public', tabindex: 0 }, text));
    say(`Pack: ${b.used_items} items, ${b.used_tokens}/${b.max_tokens} tokens, dropped ${b.dropped}, shortened ${b.shortened}.`);
  } catch (error) {
    fail(error);
  }
}

export function setup() {
  $('#budget-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const f = event.target.elements;
    pack(f.query.value.trim(), Number(f.max_tokens.value), Number(f.max_items.value));
  });
}
