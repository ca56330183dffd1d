import { expect } from 'chai';
import { itemsFromMarkdown, markdownFromItems, normalizeTerms } from '../lib/domain/plans.js';
describe('plan Markdown items and search terms', () => {
    it('ignores task lines inside fenced code blocks and keeps nested heading paths', () => {
        const md = [
            '# Sprint', '- [ ] real item {#r1}', '```', '- [ ] not an item {#fake}', '```',
            '## Backend', '~~~md', '- [x] also not', '~~~', '- [x] done thing {#b2}', '# Other', '- [ ] outside',
        ].join('\n');
        expect(itemsFromMarkdown(md, 'Sprint')).to.deep.equal([
            { plan_item_ref: 'r1', text: 'real item', checkbox_state: 'unchecked', heading_path: ['Sprint'] },
            { plan_item_ref: 'b2', text: 'done thing', checkbox_state: 'checked', heading_path: ['Sprint', 'Backend'] },
        ]);
    });
    it('round-trips items through the synthesized Markdown', () => {
        const items = [
            { plan_item_ref: 'a', text: 'first', checkbox_state: 'checked', heading_path: ['Root'] },
            { plan_item_ref: null, text: 'second', checkbox_state: 'unchecked', heading_path: ['Root'] },
        ];
        expect(itemsFromMarkdown(markdownFromItems('Root', items), 'Root')).to.deep.equal(items);
    });
    it('normalizes terms: NFKC, case fold (incl. ς, ß), trim, blanks and duplicates dropped', () => {
        expect(normalizeTerms([' Ｆｏｏ ', 'foo', '', '   ', 'ΟΔΟΣ', 'Straße', 'e\u0301'])).to.deep.equal(['foo', 'οδοσ', 'strasse', 'é']);
    });
});
//# sourceMappingURL=plans-domain.test.js.map