// The streaming structure counter that bounds JSON bodies before JSON.parse (lib/http/json-body.ts).
import { expect } from 'chai';
import fc from 'fast-check';
import { JsonShapeCounter, MAX_JSON_DEPTH } from '../lib/http/json-body.js';
/** Values and keys JSON.parse creates for `v`. */
function actualCount(v) {
    if (Array.isArray(v))
        return 1 + v.reduce((n, x) => n + actualCount(x), 0);
    if (v !== null && typeof v === 'object')
        return 1 + Object.entries(v).reduce((n, [, x]) => n + 1 + actualCount(x), 0);
    return 1;
}
function countIn(text, cuts) {
    const bytes = Buffer.from(text, 'utf8');
    const counter = new JsonShapeCounter({ maxBytes: Infinity, maxValues: Infinity });
    let at = 0;
    for (const cut of [...cuts.map((c) => c % (bytes.length + 1))].sort((a, b) => a - b)) {
        counter.feed(bytes.subarray(at, cut));
        at = cut;
    }
    counter.feed(bytes.subarray(at));
    return counter.count;
}
describe('JSON body shape counter', () => {
    it('bounds the values and keys of any JSON, however the bytes are cut (escapes and quotes in strings included)', () => {
        fc.assert(fc.property(fc.jsonValue(), fc.array(fc.nat(), { maxLength: 8 }), (value, cuts) => {
            const text = JSON.stringify(value);
            const counted = countIn(text, cuts);
            expect(counted).to.be.at.least(actualCount(JSON.parse(text)));
            // ...and not wildly more: strings full of commas, colons and brackets do not count.
            expect(counted).to.be.at.most(2 * actualCount(JSON.parse(text)) + 1);
        }), { numRuns: 300 });
    });
    it('ignores structure inside strings, across an escaped quote split between chunks', () => {
        const text = '{"a":"x\\",[,{:,]","b":[1,2]}';
        for (let cut = 0; cut <= text.length; cut++)
            expect(countIn(text, [cut])).to.equal(countIn(text, []));
        expect(countIn(text, [])).to.equal(1 + 4 + 2);
    });
    it('refuses too many values and too deep a nesting (413)', () => {
        const counter = new JsonShapeCounter({ maxBytes: Infinity, maxValues: 10 });
        expect(() => counter.feed(Buffer.from('[0,0,0,0,0,0,0,0,0,0,0,0]'))).to.throw(/more than 10 JSON values/);
        const deep = new JsonShapeCounter({ maxBytes: Infinity, maxValues: Infinity });
        expect(() => deep.feed(Buffer.from('['.repeat(MAX_JSON_DEPTH + 1)))).to.throw(/deeper than/);
    });
});
//# sourceMappingURL=json-body.test.js.map