// Child process of the land kill -9 sweep (test/lands.test.ts): opens one authority directly and
// lands a change's selected patchset through a LandDesk built with a passing gate function (the
// DI seam, so the commit is exercised apart from the evidence). CAIRN_TEST_CRASH_AT kills it mid-commit.
import pino from 'pino';
import { Authority } from '../lib/authority/authority.js';
import { LandDesk } from '../lib/authority/workflow/lands.js';

const [root, index, change, mode] = process.argv.slice(2);
const a = await Authority.open(root, Number(index), pino({ level: 'silent' }));
const out = await new LandDesk(a.store, a.workflow, () => ({ refusal: null, policy_decision_id: null })).submit(change, { mode });
process.stdout.write(JSON.stringify(out.land) + '\n');
a.store.close();
