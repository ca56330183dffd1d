import { expect } from 'chai';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Corrupt } from '../lib/domain/errors.js';
import type { JobRecord } from '../lib/domain/jobs.js';
import { frameBody, logHeader, readFramedLog } from '../lib/store/framed-log.js';
import { decodeJobBody, decodeJobKey, encodeJobKey, encodeJobRecord, loadJobLog } from '../lib/store/job-log.js';
import { RecordLog } from '../lib/store/record-log.js';
import { FIXTURES, tempDir } from './helpers.js';

const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));

describe('job and plan logs against golden fixtures', () => {
  const job = JSON.parse(fixture('jobs-v0.json').toString('utf8')) as JobRecord;

  it('binary-worker-job-key.v0 is repository_index u32 LE then worker_job_index u32 LE', () => {
    expect(encodeJobKey(2, 1).toString('hex')).to.equal('0200000001000000');
    expect(decodeJobKey(Buffer.from('0200000001000000', 'hex'))).to.deep.equal({ repository_index: 2, worker_job_index: 1 });
  });

  it('jobs.log: one framed record encodes byte for byte as fixtures/jobs-v0.log and decodes back', async () => {
    const bytes = fixture('jobs-v0.log');
    expect(Buffer.concat([logHeader('CAIRNJOB'), frameBody(encodeJobRecord(job))]).equals(bytes)).to.equal(true);
    expect(bytes.toString('ascii', 0, 8)).to.equal('CAIRNJOB');
    const body = bytes.subarray(16, 16 + bytes.readUInt32LE(12));
    expect(body.subarray(0, 8).toString('hex')).to.equal('0200000001000000');
    expect([body[8], body[9], body.readUInt16LE(12), body.readUInt16LE(14), body[17]]).to.deep.equal([11, 2, 1, 3, 1]);
    expect(decodeJobBody(body)).to.deep.equal(job);
    const file = path.join(tempDir(), 'jobs.log');
    copyFileSync(path.join(FIXTURES, 'jobs-v0.log'), file);
    const loaded = await loadJobLog(file);
    expect(loaded.jobs.get(1)).to.deep.equal(job);
  });

  it('cuts a torn last record (reported) and refuses a damaged earlier one', async () => {
    const whole = fixture('jobs-v0.log');
    const two = Buffer.concat([whole, whole.subarray(12)]);
    const torn = path.join(tempDir(), 'torn.log');
    writeFileSync(torn, two.subarray(0, two.length - 5));
    const { bodies, notes } = await readFramedLog(torn, 'CAIRNJOB');
    expect(bodies).to.have.length(1);
    expect(notes[0]).to.match(/cut \d+ bytes/);
    expect(readFileSync(torn).length).to.equal(whole.length);
    const damaged = Buffer.from(two);
    damaged[30] ^= 0xff;
    const bad = path.join(tempDir(), 'bad.log');
    writeFileSync(bad, damaged);
    let error: unknown;
    await readFramedLog(bad, 'CAIRNJOB').catch((err) => { error = err; });
    expect(error).to.be.instanceOf(Corrupt);
    expect(readFileSync(bad).equals(damaged)).to.equal(true); // never repaired silently
  });

  it('plans.log: a JSON record framed the same way', async () => {
    const file = path.join(tempDir(), 'plans.log');
    copyFileSync(path.join(FIXTURES, 'plans-v0.log'), file);
    const { log, records } = await RecordLog.open<{ plan: { plan_id: string } }>(file, 'CAIRNPLN');
    log.close();
    expect(records).to.have.length(1);
    expect(records[0].plan.plan_id).to.equal('plan-1');
    expect(Buffer.concat([logHeader('CAIRNPLN'), frameBody(Buffer.from(JSON.stringify(records[0]), 'utf8'))]).equals(fixture('plans-v0.log'))).to.equal(true);
  });
});
