// Where a link in rendered Markdown may point (docs/operations.md, "Rendered Markdown"). No
// imports: markdown.js uses it in the browser, and the tests run it under Node, whose URL class
// is the same WHATWG URL parser the browser follows links with.

/** Schemes a link may have once parsed; a relative target takes the page's own (http or https). */
const ALLOWED_SCHEMES = new Set(['http:', 'https:', 'mailto:']);

// The HTML named references a plan is likely to use, and the three that spell a scheme's
// punctuation (`javascript&colon;`, `&Tab;`, `&NewLine;`).
const NAMED = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', copy: '©', reg: '®', trade: '™', hellip: '…', mdash: '—', ndash: '–', laquo: '«', raquo: '»', middot: '·', times: '×', rarr: '→', larr: '←', colon: ':', Tab: '\t', NewLine: '\n' };

/** Character references in text and link targets (marked leaves them to the HTML it would emit). */
export function decodeEntities(text) {
  if (!text.includes('&')) return text;
  return text.replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]+);/g, (all, ref) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
    }
    return NAMED[ref] ?? all;
  });
}

/**
 * The URL a Markdown link target (as marked lexed it) may lead to from the page at `base`, or
 * null. The target's character references are decoded (as CommonMark says), then the WHATWG URL
 * parser reads it against the page, as the browser does when the link is followed: it drops
 * leading and trailing C0 controls and spaces and every tab and newline, lower-cases the scheme
 * and resolves relative targets. Only http, https and mailto pass. The caller writes the parsed
 * URL's `href` into the page, never the original text, so what was checked is what is followed
 * (`java\tscript:`, `\u0001javascript:`, `JaVaScRiPt:` and `javascript&colon;` are all
 * `javascript:` here, and refused).
 */
export function linkTarget(href, base) {
  if (typeof href !== 'string') return null;
  let url;
  try {
    url = new URL(decodeEntities(href), base);
  } catch {
    return null;
  }
  return ALLOWED_SCHEMES.has(url.protocol) ? url : null;
}
