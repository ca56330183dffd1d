// What is reviewed is what lands (docs/git.md "Push for review"): a push that adds a patchset to
// a change makes it the selected patchset in the same commit (with its patchset.selected event),
// so readiness and a land judge the amended code; `git push -o noselect` keeps the selection and
// says so; `cairn change select CHANGE PS` moves it (and refuses a patchset the change lacks).
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { LandDesk } from '../lib/authority/workflow/lands.js';
import type { LandGates } from '../lib/authority/workflow/gates.js';
import { parsePushCommands } from '../lib/http/git-http-backend.js';
import { api, cli, ok, onTty, startTestServer, type TestServer } from './helpers.js';
import { gitClient, hasGit, servedClone } from './git-fixture.js';

type Json = Record<string, any>;
const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;

const client = gitClient;

const pkt = (text: string) => Buffer.concat([Buffer.from((Buffer.byteLength(text) + 4).toString(16).padStart(4, '0')), Buffer.from(text)]);

describe('parsePushCommands reads push options', () => {
  const cmd = `${'0'.repeat(40)} ${'1'.repeat(40)} refs/for/main`;
  it('after the commands\' flush, when the client asked for push-options', () => {
    const body = Buffer.concat([pkt(`${cmd}\0report-status push-options`), Buffer.from('0000'), pkt('noselect\n'), Buffer.from('0000'), Buffer.from('PACK')]);
    expect(parsePushCommands(body)).to.deep.include({ options: ['noselect'], complete: true });
    // Cut before the options' flush: not complete yet.
    expect(parsePushCommands(body.subarray(0, body.length - 8)).complete).to.equal(false);
  });
  it('none without the capability (what follows the flush is the pack)', () => {
    const body = Buffer.concat([pkt(`${cmd}\0report-status`), Buffer.from('0000'), Buffer.from('PACK')]);
    expect(parsePushCommands(body)).to.deep.include({ options: [], complete: true });
  });
});

(hasGit ? describe : describe.skip)('a push selects the patchset it makes', function () {
  this.timeout(180_000);
  let s: TestServer;
  let repo: number;
  let url: string;
  let dir: string;
  const get = (p: string) => ok(api(s.url, 'GET', R(repo, p)));

  before(async () => {
    s = await startTestServer();
    ({ repo, lineUrl: url, dir } = await servedClone(s.url, 'push-select'));
    // Gates that pass: the land is judged on the selected patchset alone.
    const a = await (await s.ready).opened(repo);
    const PASS: LandGates = () => ({ refusal: null, policy_decision_id: null });
    (a as unknown as { lands: LandDesk }).lands = new LandDesk(a.store, a.workflow, PASS);
  });
  after(async () => { await s?.stop(); });

  const amend = async (text: string): Promise<string> => {
    await fsp.writeFile(path.join(dir, 'greeting.txt'), text);
    expect((await client(['-C', dir, 'add', '-A'])).code).to.equal(0);
    expect((await client(['-C', dir, 'commit', '-q', '--amend', '--no-edit'])).code).to.equal(0);
    return (await client(['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
  };

  it('an amended push is ps-2 and selected (readiness judges it); -o noselect keeps ps-2 and says so; cairn change select moves it; the land lands the selected one', async () => {
    const key = `I${createHash('sha1').update('select').digest('hex')}`;
    await fsp.writeFile(path.join(dir, 'greeting.txt'), 'hello\n');
    expect((await client(['-C', dir, 'add', '-A'])).code).to.equal(0);
    expect((await client(['-C', dir, 'commit', '-q', '-m', `Greet\n\nChange-Id: ${key}\n`])).code).to.equal(0);
    const first = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(first.code, first.stderr).to.equal(0);
    expect((await get('/changes/change-1')).change.selected_patchset_id).to.equal('change-1.ps-1');

    // Amended (same Change-Id): ps-2, and it is what is reviewed and landed now.
    const eventsBefore = (await get('/events?limit=1000')).events.length;
    await amend('hello, world\n');
    const second = await client(['-C', dir, 'push', url, 'HEAD:refs/for/main']);
    expect(second.code, second.stderr).to.equal(0);
    expect((await get('/changes/change-1')).change).to.include({ patchset_count: 2, current_patchset_id: 'change-1.ps-2', selected_patchset_id: 'change-1.ps-2' });
    expect(second.stderr).to.include('Updated change (change-1.ps-2)').and.to.include('selected: change-1.ps-2 (what is reviewed and landed)');
    expect((await get('/read/changes/change-1/readiness')).selected_patchset_id).to.equal('change-1.ps-2');
    const events = ((await get('/events?limit=1000')).events as Json[]).slice(eventsBefore);
    expect(events.filter((e) => e.type.startsWith('patchset.')).map((e) => [e.type, e.data.patchset_id])).to.deep.equal([['patchset.created', 'change-1.ps-2'], ['patchset.selected', 'change-1.ps-2']]);

    // Amended again, pushed with -o noselect: ps-3, ps-2 stays selected, and the pusher is told.
    const third = await amend('hello, world!\n');
    const kept = await client(['-C', dir, 'push', '-o', 'noselect', url, 'HEAD:refs/for/main']);
    expect(kept.code, kept.stderr).to.equal(0);
    expect(kept.stderr).to.include('Updated change (change-1.ps-3)').and.to.include('kept selected: change-1.ps-2 (noselect); to review this push: cairn change select change-1 change-1.ps-3');
    expect((await get('/changes/change-1')).change).to.include({ patchset_count: 3, current_patchset_id: 'change-1.ps-3', selected_patchset_id: 'change-1.ps-2' });

    // An unknown push option is refused, and writes nothing.
    await amend('hello?\n');
    const unknown = await client(['-C', dir, 'push', '-o', 'private', url, 'HEAD:refs/for/main']);
    expect(unknown.code).to.not.equal(0);
    expect(unknown.stderr).to.include('unknown push option -o private: a push for review takes -o noselect');
    expect((await get('/changes/change-1')).change.patchset_count).to.equal(3);

    // cairn change select: back to ps-1 (JSON), then a patchset the change lacks, then ps-3 (on a terminal).
    const at = ['--server', s.url, '--repo', String(repo)];
    const back = await cli(['change', 'select', ...at, '--json', 'change-1', 'ps-1']);
    expect(back.code, back.stderr).to.equal(0);
    expect(JSON.parse(back.stdout).change.selected_patchset_id).to.equal('change-1.ps-1');
    expect((await get('/read/changes/change-1/readiness')).selected_patchset_id).to.equal('change-1.ps-1');
    const missing = await cli(['change', 'select', ...at, 'change-1', 'ps-9']);
    expect(missing.code).to.not.equal(0);
    expect(missing.stderr).to.include('task-1.change-1 has 3 patchsets: it has no ps-9');
    const odd = await cli(['change', 'select', ...at, 'change-1', 'latest']);
    expect(odd.code).to.not.equal(0);
    expect(odd.stderr).to.include('PS must name a patchset: ps-2, 2 or change-3.ps-2');
    const foreign = await cli(['change', 'select', ...at, 'change-1', 'change-7.ps-1']);
    expect(foreign.code).to.not.equal(0);
    expect(foreign.stderr).to.include('patchset change-7.ps-1 does not exist');
    const help = await cli(['change', 'select', '--help']);
    expect(help.stdout).to.include('cairn change select CHANGE PS');
    const onTerminal = await onTty(['change', 'select', ...at, 'change-1', '3']);
    expect(onTerminal.status, onTerminal.stdout).to.equal(0);
    expect(onTerminal.stdout).to.include('selected change-1.ps-3 of task-1.change-1 (what is reviewed and landed)');

    // The land lands the selected patchset (ps-3, the noselect push's commit) and says which.
    const landed = await onTty(['land', ...at, '--mode', 'ff-only', 'change-1']);
    expect(landed.status, landed.stdout).to.equal(0);
    expect(landed.stdout).to.include('landed task-1.change-1 change-1.ps-3 onto main');
    expect((await client(['-C', dir, 'fetch', '-q', 'origin'])).code).to.equal(0);
    expect((await client(['-C', dir, 'rev-parse', 'origin/main'])).stdout.trim()).to.equal(third);
  });
});
