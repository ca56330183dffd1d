// The pure parts of push for review (lib/domain/git-push.ts): the ref `refs/for/<line>%options`,
// Gerrit's Change-Id trailer, and a commit message as a title and a body.
import { expect } from 'chai';
import { changeIdTrailer, reviewTarget, titleAndBody } from '../lib/domain/git-push.js';
describe('push for review: refs, options, Change-Id', () => {
    it('reads refs/for/<line> and its %task= and %change= options', () => {
        expect(reviewTarget('refs/for/main')).to.deep.equal({ line: 'main', task_id: null, change_id: null });
        expect(reviewTarget('refs/for/team/dev%task=task-3')).to.deep.equal({ line: 'team/dev', task_id: 'task-3', change_id: null });
        expect(reviewTarget('refs/for/main%change=change-7')).to.deep.equal({ line: 'main', task_id: null, change_id: 'change-7' });
        expect(reviewTarget('refs/for/main%change=task-2.change-7')).to.deep.equal({ line: 'main', task_id: 'task-2', change_id: 'change-7' });
        expect(reviewTarget('refs/for/main%task=task-2,change=change-7')).to.deep.equal({ line: 'main', task_id: 'task-2', change_id: 'change-7' });
    });
    it('refuses what it does not know, with the reason git prints', () => {
        expect(reviewTarget('refs/heads/main')).to.deep.equal({ refused: '' });
        expect(reviewTarget('refs/for/')).to.deep.equal({ refused: 'refs/for/ must name a line: refs/for/main' });
        expect(reviewTarget('refs/for/main%wip')).to.deep.equal({ refused: 'unknown push option %wip: refs/for/main takes %task=task-N and %change=change-N' });
        expect(reviewTarget('refs/for/main%topic=x')).to.have.property('refused').that.match(/^unknown push option %topic=x/);
        expect(reviewTarget('refs/for/main%task=nope')).to.deep.equal({ refused: '%task=nope does not name a task (task-3)' });
        expect(reviewTarget('refs/for/main%change=x')).to.deep.equal({ refused: '%change=x does not name a change (change-3)' });
        expect(reviewTarget('refs/for/main%task=task-1,change=task-2.change-7')).to.deep.equal({ refused: '%change=task-2.change-7 is not a change of task-1' });
    });
    it('refuses an option given twice, naming it, whether its values agree or not (no last-one-wins)', () => {
        const twice = (key) => ({ refused: `%${key}= may be given once: refs/for/main takes one %task=task-N and one %change=change-N` });
        expect(reviewTarget('refs/for/main%task=task-1,task=task-2')).to.deep.equal(twice('task'));
        expect(reviewTarget('refs/for/main%task=task-1,task=task-1')).to.deep.equal(twice('task'));
        expect(reviewTarget('refs/for/main%change=change-1,change=change-2')).to.deep.equal(twice('change'));
        expect(reviewTarget('refs/for/main%task=task-2,change=change-7,task=task-3')).to.deep.equal(twice('task'));
        // A %change= that names its task, then a %task= of another: refused whichever comes first.
        expect(reviewTarget('refs/for/main%change=task-2.change-7,task=task-1')).to.deep.equal({ refused: '%change=task-2.change-7 is not a change of task-1' });
        expect(reviewTarget('refs/for/main%change=task-2.change-7,task=task-2')).to.deep.equal({ line: 'main', task_id: 'task-2', change_id: 'change-7' });
    });
    it('finds the Change-Id trailer only in the last paragraph', () => {
        const id = `I${'a'.repeat(40)}`;
        expect(changeIdTrailer(`Subject\n\nBody\n\nChange-Id: ${id}\n`)).to.equal(id);
        expect(changeIdTrailer(`Subject\n\nSigned-off-by: A <a@b>\nChange-Id: ${id}\n`)).to.equal(id);
        expect(changeIdTrailer(`Subject\n\nChange-Id: ${id}\n\nMore text\n`)).to.equal(null);
        expect(changeIdTrailer(`Change-Id: ${id}\n`)).to.equal(null); // a subject is not a trailer
        expect(changeIdTrailer(`Subject\n\nChange-Id: I123\n`)).to.equal(null);
    });
    it('splits a message into a one-line title and the rest', () => {
        expect(titleAndBody('Add x\n\nWhy.\n\nMore.\n', 1024)).to.deep.equal({ title: 'Add x', body: 'Why.\n\nMore.' });
        expect(titleAndBody('A subject\nwrapped\n', 1024)).to.deep.equal({ title: 'A subject wrapped', body: '' });
        expect(titleAndBody('x'.repeat(10), 4).title).to.equal('xxxx');
    });
});
//# sourceMappingURL=git-push-ref.test.js.map