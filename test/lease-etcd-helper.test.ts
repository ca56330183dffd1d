// test/etcd.ts itself: a one-node etcd starts, answers, stops answering while paused and again once resumed.
import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import { useEtcd } from './etcd.js';

describe('test/etcd.ts: a one-node etcd for the lease tests', function () {
  this.timeout(120_000);
  const etcd = useEtcd();

  it('answers, holds a value, hangs while paused and answers again after resume', async () => {
    const c = new Etcd3({ hosts: etcd().endpoint });
    try {
      await c.put('probe').value('ok');
      expect(await c.get('probe').string()).to.equal('ok');
      etcd().pause();
      expect(await etcd().answers(1000)).to.equal(false);
      await etcd().resume();
      expect(await c.get('probe').string()).to.equal('ok');
    } finally {
      c.close();
    }
  });
});
