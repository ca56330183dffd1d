// Child process of the land kill -9 sweeps (test/lands.test.ts): opens one authority directly and
// lands a change's selected patchset through a LandDesk built with a passing gate function (the
// DI seam, so the commit is exercised apart from the evidence). CAIRN_TEST_CRASH_AT kills it
// mid-commit. With a fifth argument (a snapshot id), the target line is moved there after the
// land's first plan, as another client would move it: the land then plans again.
import pino from 'pino';
import { Authority } from '../lib/authority/authority.js';
import { LandDesk } from '../lib/authority/workflow/lands.js';
const [root, index, change, mode, moveTo] = process.argv.slice(2);
const a = await Authority.open(root, Number(index), pino({ level: 'silent' }));
const desk = new LandDesk(a.store, a.workflow, () => ({ refusal: null, policy_decision_id: null }));
if (moveTo) {
    const planner = desk;
    const realPlan = planner.plan;
    let moved = false;
    planner.plan = async function (...args) {
        const plan = await realPlan.apply(this, args);
        if (!moved) {
            moved = true;
            await a.content.putLine(plan.target, { head_snapshot_id: moveTo, expected_head_snapshot_id: plan.head });
        }
        return plan;
    };
}
const out = await desk.submit(change, { mode });
process.stdout.write(JSON.stringify(out.land) + '\n');
a.store.close();
//# sourceMappingURL=land-crash-child.js.map