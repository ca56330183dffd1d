// Each change's lands by sequence, in typed arrays (the land records stay in workflow.log,
// lib/store/workflow-records.ts reads them): the land desk's index (lib/authority/workflow/lands.ts)
// and its section of workflow.ckpt (storage-layout.md §17.1). It changes when the change page's
// land history needs another index.
/** The land desk's section of workflow.ckpt (storage-layout.md §17.1). */
export const LAND_SECTION = 'land-indexes';
/**
 * Each change's lands by sequence, in typed arrays (the land records stay in workflow.log): the
 * change of each land, and per change a linked list of its lands, oldest first.
 */
export class LandIndex {
    count = 0;
    landChange = new Int32Array(256);
    nextLand = new Int32Array(256);
    firstLand = new Int32Array(256);
    lastLand = new Int32Array(256);
    static grow(a, need) {
        if (need < a.length)
            return a;
        let n = a.length;
        while (n <= need)
            n *= 2;
        const b = new Int32Array(n);
        b.set(a);
        return b;
    }
    has(seq) {
        return seq > 0 && seq <= this.count && this.landChange[seq] !== 0;
    }
    /** A land committed (a new sequence, or an upsert of a known one). */
    add(seq, change) {
        if (this.has(seq))
            return;
        if (change <= 0)
            throw new Error(`land ${seq} names no change`);
        this.landChange = LandIndex.grow(this.landChange, seq);
        this.nextLand = LandIndex.grow(this.nextLand, seq);
        this.firstLand = LandIndex.grow(this.firstLand, change);
        this.lastLand = LandIndex.grow(this.lastLand, change);
        this.landChange[seq] = change;
        const last = this.lastLand[change];
        if (last === 0)
            this.firstLand[change] = seq;
        else
            this.nextLand[last] = seq;
        this.lastLand[change] = seq;
        if (seq > this.count)
            this.count = seq;
    }
    /** Land sequences of a change, oldest first. */
    ofChange(change) {
        const out = [];
        if (change <= 0 || change >= this.firstLand.length)
            return out;
        for (let l = this.firstLand[change]; l !== 0; l = this.nextLand[l])
            out.push(l);
        return out;
    }
    /** Land count u32, then each land's change sequence (i32 × (count + 1)). */
    encode() {
        const head = Buffer.alloc(4);
        head.writeUInt32LE(this.count, 0);
        return Buffer.concat([head, Buffer.from(this.landChange.buffer, this.landChange.byteOffset, 4 * (this.count + 1))]);
    }
    static decode(buf) {
        if (buf.length < 4)
            throw new Error('land index section: too short');
        const count = buf.readUInt32LE(0);
        if (buf.length !== 4 + 4 * (count + 1))
            throw new Error('land index section: wrong length');
        const x = new LandIndex();
        for (let seq = 1; seq <= count; seq++)
            x.add(seq, buf.readInt32LE(4 + 4 * seq));
        return x;
    }
}
//# sourceMappingURL=land-index.js.map