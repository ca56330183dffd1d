import { expect } from 'chai';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Corrupt } from '../lib/domain/errors.js';
import { frameBody, legacyValidLength, logHeader, scanRecords } from '../lib/store/framed-log.js';
import { decodeJobBody, decodeJobKey, encodeJobKey, encodeJobRecord } from '../lib/store/job-log.js';
import { FIXTURES, tempDir } from './helpers.js';
import { writeFileSync } from 'node:fs';
/** Every record of a log file in [12, end), through the strict reader. */
function records(file, end) {
    const fd = openSync(file, 'r');
    try {
        const size = end ?? readFileSync(file).length;
        return [...scanRecords(fd, size, path.basename(file))].map((r) => r.body);
    }
    finally {
        closeSync(fd);
    }
}
const fixture = (name) => readFileSync(path.join(FIXTURES, name));
describe('job and plan logs against golden fixtures', () => {
    const job = JSON.parse(fixture('jobs-v0.json').toString('utf8'));
    it('binary-worker-job-key.v0 is repository_index u32 LE then worker_job_index u32 LE', () => {
        expect(encodeJobKey(2, 1).toString('hex')).to.equal('0200000001000000');
        expect(decodeJobKey(Buffer.from('0200000001000000', 'hex'))).to.deep.equal({ repository_index: 2, worker_job_index: 1 });
    });
    it('jobs.log: one framed record encodes byte for byte as fixtures/jobs-v0.log and decodes back', () => {
        const bytes = fixture('jobs-v0.log');
        expect(Buffer.concat([logHeader('CAIRNJOB'), frameBody(encodeJobRecord(job))]).equals(bytes)).to.equal(true);
        expect(bytes.toString('ascii', 0, 8)).to.equal('CAIRNJOB');
        const body = bytes.subarray(16, 16 + bytes.readUInt32LE(12));
        expect(body.subarray(0, 8).toString('hex')).to.equal('0200000001000000');
        expect([body[8], body[9], body.readUInt16LE(12), body.readUInt16LE(14), body[17]]).to.deep.equal([11, 2, 1, 3, 1]);
        expect(decodeJobBody(body)).to.deep.equal(job);
        expect(records(path.join(FIXTURES, 'jobs-v0.log')).map(decodeJobBody)).to.deep.equal([job]);
    });
    it('inside the committed range every record must pass: a damaged length field or checksum is corruption naming the offset', () => {
        const whole = fixture('jobs-v0.log');
        const three = Buffer.concat([whole, whole.subarray(12), whole.subarray(12)]);
        const file = path.join(tempDir(), 'jobs.log');
        const damagedLength = Buffer.from(three);
        damagedLength[12] ^= 0x40; // the first record's length field
        writeFileSync(file, damagedLength);
        expect(() => records(file)).to.throw(Corrupt, /record at byte 12/);
        const damagedBody = Buffer.from(three);
        damagedBody[three.length - 10] ^= 0x01; // inside the last record
        writeFileSync(file, damagedBody);
        expect(() => records(file)).to.throw(Corrupt, /fails its checksum/);
        expect(readFileSync(file).equals(damagedBody)).to.equal(true); // read only, nothing cut
    });
    it('format-v0 upgrade rule: only an unfinished last record is cut; an earlier bad record is corruption', () => {
        const whole = fixture('jobs-v0.log');
        const two = Buffer.concat([whole, whole.subarray(12)]);
        const torn = path.join(tempDir(), 'torn.log');
        writeFileSync(torn, two.subarray(0, two.length - 5));
        const fd = openSync(torn, 'r');
        const { length, note } = legacyValidLength(fd, 'CAIRNJOB', 'jobs.log');
        closeSync(fd);
        expect(length).to.equal(whole.length);
        expect(note).to.match(/cut \d+ bytes/);
        const damaged = Buffer.from(two);
        damaged[30] ^= 0xff;
        const bad = path.join(tempDir(), 'bad.log');
        writeFileSync(bad, damaged);
        const fd2 = openSync(bad, 'r');
        expect(() => legacyValidLength(fd2, 'CAIRNJOB', 'jobs.log')).to.throw(Corrupt);
        closeSync(fd2);
    });
    it('format-v0 upgrade rule: a length field running past the end is corruption when an intact record follows it', () => {
        const whole = fixture('plans-v0.log');
        const three = Buffer.concat([whole, whole.subarray(12), whole.subarray(12)]);
        three[15] ^= 0x01; // the first record's length field (its high byte) now runs past the end of the file
        const file = path.join(tempDir(), 'plans.log');
        writeFileSync(file, three);
        const fd = openSync(file, 'r');
        try {
            expect(() => legacyValidLength(fd, 'CAIRNPLN', 'plans.log')).to.throw(Corrupt, /intact record starts at byte/);
        }
        finally {
            closeSync(fd);
        }
        expect(readFileSync(file).equals(three)).to.equal(true);
    });
    it('plans.log: a JSON record framed the same way', () => {
        const bodies = records(path.join(FIXTURES, 'plans-v0.log'));
        expect(bodies).to.have.length(1);
        const record = JSON.parse(bodies[0].toString('utf8'));
        expect(record.plan.plan_id).to.equal('plan-1');
        expect(Buffer.concat([logHeader('CAIRNPLN'), frameBody(Buffer.from(JSON.stringify(record), 'utf8'))]).equals(fixture('plans-v0.log'))).to.equal(true);
    });
});
//# sourceMappingURL=log-codec.test.js.map