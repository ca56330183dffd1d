// Markdown links that must never become live links in the reviewer UI: shared by the unit test
// of link-target.js (test/markdown-links.test.ts) and the Chromium test (test/ui.test.ts).
/** Markdown whose one link must not be followed: script, other schemes, and the spellings that fold into them. */
export const REFUSED_LINKS = [
    '[x](<java\tscript:alert(1)>)',
    '[x](<java&#13;script:alert(1)>)',
    '[x](JaVaScRiPt:alert(1))',
    '[x](javascript&colon;alert(1))',
    '[x](javascript&#58;alert(1))',
    '[x](&#x6A;avascript:alert(1))',
    '[x](&#106;avascript:alert(1))',
    '[x](java&Tab;script:alert(1))',
    '[x](java&NewLine;script:alert(1))',
    '[x](<\u0000javascript:alert(1)>)',
    '[x](<\u0001javascript:alert(1)>)',
    '[x](<\u001fjavascript:alert(1)>)',
    '[x](< javascript:alert(1)>)',
    '[x](< \t javascript:alert(1)>)',
    '[x](javascript\\:alert(1))',
    '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
    '[x](DATA:text/html,hi)',
    '[x](vbscript:msgbox(1))',
    '[x](file:///etc/passwd)',
    '[x](blob:http://127.0.0.1:8080/0b1c)',
    '![i](javascript:alert(1))',
    '![i](data:image/svg+xml;base64,PHN2Zy8+)',
    '<javascript:alert(1)>',
    '[x][r]\n\n[r]: javascript:alert(1)',
    '[x][r]\n\n[r]: <java\tscript:alert(1)>',
];
//# sourceMappingURL=markdown-payloads.js.map