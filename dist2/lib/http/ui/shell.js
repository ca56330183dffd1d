export const UI_ENTRY = 'app.js';
export const UI_STYLES = 'app.css';
export const UI_ICON = 'favicon.svg';
const HTML_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text safe inside an element or a double- or single-quoted attribute value. */
export function escapeHtml(text) {
    return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}
export function renderShell(assets, identity) {
    const preload = assets.staticClosure(UI_ENTRY).filter((n) => n.endsWith('.js'));
    const meta = identity.header === null
        ? ''
        : `\n<meta name="cairn-identity-header" content="${escapeHtml(identity.header)}">\n<meta name="cairn-identity" content="${escapeHtml(identity.value ?? '')}">`;
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">${meta}
<title>cairn</title>
<link rel="icon" type="image/svg+xml" href="${assets.url(UI_ICON)}">
<link rel="stylesheet" href="${assets.url(UI_STYLES)}">
${preload.map((n) => `<link rel="modulepreload" href="${assets.url(n)}">`).join('\n')}
<script type="module" src="${assets.url(UI_ENTRY)}"></script>
</head>
<body>
<div id="app"><noscript><p class="noscript">The cairn reviewer UI needs JavaScript. The HTTP interface itself is at /v1/.</p></noscript></div>
</body>
</html>
`;
}
//# sourceMappingURL=shell.js.map