// Marking text: matched query terms and redaction marks, built as DOM nodes (never markup).
//
// Which terms matched is a visual aid computed here, not by the service: a word matches a
// query term when both are equal after case and accent folding (strict, like search_memory),
// or, for recall, also when they share a long common start (other word forms:
// "deploy" / "deployment"). Paraphrases recall found semantically are not marked.

const WORD = /([\p{L}\p{N}]+)/u;
const STOP = new Set('a an and are as at be by do for from how i in is it of on or the this to was we what when where which who why with'.split(' '));
const REDACTION = /(\[REDACTED:[A-Za-z0-9_.-]+\])/;

export function fold(word) {
  return word.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

export function queryTerms(query) {
  return [...new Set((query.match(/[\p{L}\p{N}]+/gu) || []).map(fold))];
}

function commonStart(a, b) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
  return i;
}

function matchingTerm(word, terms, tolerant) {
  const w = fold(word);
  for (const term of terms) {
    if (w === term) return term;
    if (tolerant && !STOP.has(term)) {
      const shorter = Math.min(w.length, term.length);
      if (shorter >= 4 && commonStart(w, term) >= Math.max(4, shorter - 3)) return term;
    }
  }
  return null;
}

export function highlighted(text, query, tolerant) {
  // {node, matched}: `text` with matching words in <mark>, and the query terms that matched.
  const terms = queryTerms(query);
  const fragment = document.createDocumentFragment();
  const matched = new Set();
  for (const part of text.split(WORD)) {
    const term = part && WORD.test(part) ? matchingTerm(part, terms, tolerant) : null;
    if (term) {
      matched.add(term);
      const mark = document.createElement('mark');
      mark.textContent = part;
      fragment.append(mark);
    } else if (part) {
      fragment.append(part);
    }
  }
  return { node: fragment, matched: [...matched] };
}

export function redactionKinds(text) {
  return [...new Set((text || '').split(REDACTION).filter((p) => REDACTION.test(p)).map((p) => p.slice(10, -1)))];
}

export function withRedactions(text) {
  // `text` with each [REDACTED:<kind>] mark set apart.
  const fragment = document.createDocumentFragment();
  for (const part of (text || '').split(REDACTION)) {
    if (!part) continue;
    if (REDACTION.test(part)) {
      const mark = document.createElement('mark');
      mark.className = 'redaction';
      mark.textContent = part;
      fragment.append(mark);
    } else {
      fragment.append(part);
    }
  }
  return fragment;
}
