// Each change's lands by sequence, in typed arrays (the land records stay in workflow.log,
// lib/store/workflow-records.ts reads them): the land desk's index (lib/authority/workflow/lands.ts)
// and its section of workflow.ckpt (storage-layout.md §17.1). It changes when the change page's
// land history needs another index.

/** The land desk's section of workflow.ckpt (storage-layout.md §17.1). */
export const LAND_SECTION = 'land-indexes';

/**
 * Each change's lands by sequence, in typed arrays (the land records stay in workflow.log): the
 * change of each land, and per change a linked list of its lands, oldest first. Sequences are
 * dense from 1 but for the gaps an id floor leaves (serve --lease, storage-layout.md §20.8): a
 * sequence in a gap has change 0.
 */
export class LandIndex {
  /** The highest land sequence (0: none). */
  highest = 0;
  /** The lands held (the gaps not counted). */
  size = 0;
  private landChange = new Int32Array(256);
  private nextLand = new Int32Array(256);
  private firstLand = new Int32Array(256);
  private lastLand = new Int32Array(256);

  private static grow(a: Int32Array<ArrayBuffer>, need: number): Int32Array<ArrayBuffer> {
    if (need < a.length) return a;
    let n = a.length;
    while (n <= need) n *= 2;
    const b = new Int32Array(n);
    b.set(a);
    return b;
  }

  has(seq: number): boolean {
    return seq > 0 && seq <= this.highest && this.landChange[seq] !== 0;
  }

  /** A land committed (a new sequence, or an upsert of a known one). */
  add(seq: number, change: number): void {
    if (this.has(seq)) return;
    if (change <= 0) throw new Error(`land ${seq} names no change`);
    this.landChange = LandIndex.grow(this.landChange, seq);
    this.nextLand = LandIndex.grow(this.nextLand, seq);
    this.firstLand = LandIndex.grow(this.firstLand, change);
    this.lastLand = LandIndex.grow(this.lastLand, change);
    this.landChange[seq] = change;
    const last = this.lastLand[change];
    if (last === 0) this.firstLand[change] = seq;
    else this.nextLand[last] = seq;
    this.lastLand[change] = seq;
    this.size++;
    if (seq > this.highest) this.highest = seq;
  }

  /** Land sequences of a change, oldest first. */
  ofChange(change: number): number[] {
    const out: number[] = [];
    if (change <= 0 || change >= this.firstLand.length) return out;
    for (let l = this.firstLand[change]; l !== 0; l = this.nextLand[l]) out.push(l);
    return out;
  }

  /** The highest land sequence u32, then each sequence's change sequence (i32 × (highest + 1); 0: no land). */
  encode(): Buffer {
    const head = Buffer.alloc(4);
    head.writeUInt32LE(this.highest, 0);
    return Buffer.concat([head, Buffer.from(this.landChange.buffer, this.landChange.byteOffset, 4 * (this.highest + 1))]);
  }

  static decode(buf: Buffer): LandIndex {
    if (buf.length < 4) throw new Error('land index section: too short');
    const count = buf.readUInt32LE(0);
    if (buf.length !== 4 + 4 * (count + 1)) throw new Error('land index section: wrong length');
    const x = new LandIndex();
    for (let seq = 1; seq <= count; seq++) {
      const change = buf.readInt32LE(4 + 4 * seq);
      if (change !== 0) x.add(seq, change); // 0: a gap
    }
    if (x.highest !== count) throw new Error('land index section: its highest sequence names no land');
    return x;
  }
}

