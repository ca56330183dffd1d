// Markdown of plan artifacts, rendered safely. marked (a well-kept CommonMark/GFM parser) only
// lexes the text into tokens; this file turns the tokens into preact elements, so every piece
// of text is escaped by preact and no HTML string is ever inserted. Raw HTML in the Markdown is
// shown as text, links keep only http(s), mailto and relative targets (checked by the URL parser
// itself: link-target.js), and images are shown as links (the page loads nothing from elsewhere;
// the CSP forbids it anyway).
import { html, useMemo } from './vendor/preact.js';
import { Lexer } from './vendor/marked.js';
import { decodeEntities, linkTarget } from './link-target.js';

/** A link of the Markdown as an element: a link the browser may follow, or the text alone. */
function link(target, body, cls) {
  const url = linkTarget(target, document.baseURI);
  if (url === null) return null;
  const elsewhere = url.origin !== location.origin;
  return html`<a class=${cls} href=${url.href} rel="noopener noreferrer nofollow" target=${elsewhere && url.protocol !== 'mailto:' ? '_blank' : undefined}>${body}</a>`;
}

function inline(tokens) {
  return (tokens ?? []).map((t) => {
    switch (t.type) {
      case 'text': return t.tokens ? inline(t.tokens) : decodeEntities(t.text);
      case 'escape': return t.text;
      case 'strong': return html`<strong>${inline(t.tokens)}</strong>`;
      case 'em': return html`<em>${inline(t.tokens)}</em>`;
      case 'del': return html`<del>${inline(t.tokens)}</del>`;
      case 'codespan': return html`<code>${t.text}</code>`;
      case 'br': return html`<br />`;
      case 'link': return link(t.href, inline(t.tokens), undefined) ?? html`<span class="md-link-blocked" title="link not followed">${inline(t.tokens)}</span>`;
      case 'image': {
        const label = `[image: ${t.text || t.href}]`;
        return link(t.href, label, 'md-image') ?? html`<span class="md-image">${label}</span>`;
      }
      case 'html': return html`<code class="md-html">${t.text}</code>`;
      case 'checkbox': return null;
      default: return t.raw ?? '';
    }
  });
}

/** A plan item's trailing `{#ref}`, shown as a tag. */
function withRef(nodes, text) {
  const m = /\s\{#([A-Za-z0-9_.:-]{1,128})\}\s*$/.exec(text ?? '');
  return m ? [nodes, ' ', html`<code class="item-ref" title="plan item ref">#${m[1]}</code>`] : nodes;
}

function stripRef(tokens) {
  if (!tokens || tokens.length === 0) return tokens;
  const last = tokens[tokens.length - 1];
  if (last.type !== 'text') return tokens;
  const text = last.text.replace(/\s\{#[A-Za-z0-9_.:-]{1,128}\}\s*$/, '');
  return [...tokens.slice(0, -1), { ...last, text, tokens: last.tokens ? stripRef(last.tokens) : undefined }];
}

function block(t) {
  switch (t.type) {
    case 'space': case 'def': return null;
    case 'heading': {
      const level = Math.min(6, Math.max(1, t.depth));
      const body = inline(t.tokens);
      return [html`<h1 class="md-h">${body}</h1>`, html`<h2 class="md-h">${body}</h2>`, html`<h3 class="md-h">${body}</h3>`, html`<h4 class="md-h">${body}</h4>`, html`<h5 class="md-h">${body}</h5>`, html`<h6 class="md-h">${body}</h6>`][level - 1];
    }
    case 'paragraph': return html`<p>${inline(t.tokens)}</p>`;
    case 'text': return html`<p>${t.tokens ? inline(t.tokens) : decodeEntities(t.text)}</p>`;
    case 'code': return html`<pre class="md-code"><code>${t.text}</code></pre>`;
    case 'blockquote': return html`<blockquote>${blocks(t.tokens)}</blockquote>`;
    case 'hr': return html`<hr />`;
    case 'html': return html`<pre class="md-html"><code>${t.text}</code></pre>`;
    case 'list': {
      const items = t.items.map((item) => {
        const inner = item.tokens.filter((x) => x.type !== 'checkbox');
        const content = item.loose ? blocks(inner) : inner.map((x) => (x.type === 'text' ? withRef(x.tokens ? inline(stripRef(x.tokens)) : decodeEntities(x.text), x.text) : block(x)));
        return item.task
          ? html`<li class="task"><input type="checkbox" disabled checked=${!!item.checked} aria-label=${item.checked ? 'done' : 'not done'} /> ${content}</li>`
          : html`<li>${content}</li>`;
      });
      return t.ordered ? html`<ol start=${t.start === '' ? undefined : t.start}>${items}</ol>` : html`<ul>${items}</ul>`;
    }
    case 'table': {
      const align = (a) => (a ? `align-${a}` : undefined);
      return html`<div class="md-table"><table class="table compact">
        <thead><tr>${t.header.map((c, i) => html`<th class=${align(t.align[i])}>${inline(c.tokens)}</th>`)}</tr></thead>
        <tbody>${t.rows.map((row) => html`<tr>${row.map((c, i) => html`<td class=${align(t.align[i])}>${inline(c.tokens)}</td>`)}</tr>`)}</tbody>
      </table></div>`;
    }
    default: return t.raw ? html`<p>${t.raw}</p>` : null;
  }
}

function blocks(tokens) {
  return (tokens ?? []).map(block);
}

export function Markdown({ text }) {
  // a page of 200 threads renders again on every read of the page: each text is lexed once
  return useMemo(() => {
    let tokens;
    try {
      tokens = Lexer.lex(text ?? '', { gfm: true });
    } catch {
      return html`<pre class="md-code"><code>${text}</code></pre>`;
    }
    return html`<div class="markdown">${blocks(tokens)}</div>`;
  }, [text]);
}
