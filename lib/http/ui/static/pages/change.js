// The change page: what the change is, whether it can land and why not, the reviews, the
// evidence (attestation, CI, policy), the reviewer's actions, and the diff of a patchset (against
// its base, or against another patchset of the change with ?against=).
// URL: /ui/repos/R/changes/REF[?ps=PATCHSET][&against=PATCHSET][&view=split][#file=PATH]
import { html, useCallback, useEffect, useRef, useState } from '../vendor/preact.js';
import { ApiError, api, get, listAll, repoPath, seg, query } from '../api.js';
import { reviewerName } from '../dialogs.js';
import { Async, Badge, Card, Empty, JobOutcome, LineLink, Part, PartError, PsLink, Snap, Time, ErrorNote, dateTime, identity, navigate, plural, settle, ui, useAsync, useIdentity, useLocation, useTitle } from '../util.js';
import { Conversation, ReplyDialog, SHOW_TAB, ThreadFlash, ThreadList, ThreadStack, ThreadsContext, readThreadsEarly, useThreadState, useThreads } from '../threads.js';
import { DiffView } from '../diff.js';
import { Markdown } from '../markdown.js';
import { Actions, LandHistory } from './actions.js';
import { useLiveRefresh } from '../live.js';
import { LandQueueCard, entryJobs, entryOfChange } from './queue.js';
import { useRepoAccess } from '../session.js';

const VIEW_KEY = 'cairn.diffView';
/** The whitespace mode of the diff, remembered in this browser (git's -w, -b, --ignore-space-at-eol). */
const WS_KEY = 'cairn.whitespace';
const WHITESPACE = [['', 'Show whitespace'], ['ignore-all', 'Ignore all (-w)'], ['ignore-change', 'Ignore amount (-b)'], ['ignore-eol', 'Ignore at line end']];
function storedWhitespace() {
  try {
    const v = localStorage.getItem(WS_KEY) ?? '';
    return WHITESPACE.some(([k]) => k === v) ? v : '';
  } catch {
    return '';
  }
}

/**
 * What can change on this page: the change, its patchsets and the evidence on them, its comment
 * threads, its lands, its land-queue entry, and its target line (another land moving it can make it conflict).
 */
const CHANGE_EVENTS = ['change.*', 'patchset.*', 'review.*', 'comment.*', 'thread.*', 'attestation.*', 'policy.*', 'job.*', 'land.*', 'queue.*', 'line.*'];

/**
 * An event about this change: it names the change, one of its patchsets, a CI job the page
 * shows (its own or its queue entry's), or, for an open change, moves or archives its target
 * line (readiness judges the merge onto the line's head).
 */
function aboutChange(d, event) {
  if (!d) return false;
  const x = event.data ?? {};
  const id = d.change.change_id;
  if (x.change_id === id) return true;
  if (typeof event.type === 'string' && event.type.startsWith('line.')) {
    return OPEN.includes(d.change.status) && x.line === (d.change.land_target_line ?? d.change.base_line);
  }
  if (typeof x.patchset_id === 'string' && x.patchset_id.startsWith(`${id}.`)) return true;
  if (x.worker_job_index === undefined) return false;
  return (d.evidence?.ci.data?.recent_jobs ?? []).some((j) => j.worker_job_index === x.worker_job_index)
    || (d.queue.data ? entryJobs(entryOfChange(d.queue.data, id)).includes(x.worker_job_index) : false);
}

function storedView() {
  try {
    return localStorage.getItem(VIEW_KEY) === 'split' ? 'split' : 'unified';
  } catch {
    return 'unified';
  }
}

const OPEN = ['draft', 'active', 'review'];
const notFound = (e) => e instanceof ApiError && e.status === 404;

/**
 * Everything about the change but the diff, read in parallel. Only the change itself must be
 * read for the page to show; every other read is settled on its own ({ data } or { error }), so
 * a card whose read failed says so, with a Retry, and the others show what they read.
 */
async function loadChange(repo, ref, psParam) {
  const P = (rest) => get(repoPath(repo, rest));
  const change = (await P(`/changes/${seg(ref)}`)).change;
  // the page's usual opening (no ?ps=, no ?against=): a patchset named in the URL may be none of this change's
  if (!psParam) {
    readDiffEarly(repo, change.selected_patchset_id ?? change.current_patchset_id);
    // the threads too: the page reads them once it has read the rest (useThreadState), which takes three rounds
    readThreadsEarly(repo, change.change_id, change.selected_patchset_id ?? change.current_patchset_id, identity().name || undefined);
  }
  const C = `/changes/${seg(change.change_id)}`;
  const [patchsets, reviews, readiness, task, queue, landed, reviewers, attention] = await Promise.all([
    settle(listAll(repoPath(repo, `${C}/patchsets`), 'patchsets').then((r) => r.rows)),
    settle((async () => {
      const first = await P(`${C}/reviews?limit=1000`);
      const rest = first.next_cursor ? await listAll(repoPath(repo, `${C}/reviews`), 'reviews') : null;
      return { ...first, reviews: rest ? rest.rows : first.reviews };
    })()),
    settle(P(`/read/changes/${seg(change.change_id)}/readiness`)),
    settle(P(`/tasks/${seg(change.task_id)}`).then((t) => t.task)),
    // Every line's queue: the active entries and the newest finished ones (where this change's entry is).
    settle(P('/land-queue')),
    // A landed change: the land that landed it (its lands come newest first; earlier ones were refused or failed).
    change.status === 'landed'
      ? settle(P(`/read/changes/${seg(change.change_id)}/lands?limit=50`).then((r) => r.lands.find((l) => l.status === 'landed') ?? null))
      : Promise.resolve(null),
    // The people: each reviewer's vote (Gerrit's label table) and whose move it is, with why.
    settle(P(`/read/changes/${seg(change.change_id)}/reviewers`).then((r) => r.reviewers)),
    settle(P(`/read/changes/${seg(change.change_id)}/attention`).then((r) => r.attention)),
  ]);
  // ?ps= naming no patchset of this change: show the selected one, and say so (never silently).
  const fallback = change.selected_patchset_id ?? change.current_patchset_id ?? null;
  let viewed = psParam || fallback;
  let missing = null;
  if (psParam && patchsets.data && !patchsets.data.some((p) => p.patchset_id === psParam)) {
    missing = psParam;
    viewed = fallback;
  }
  let evidence = null;
  if (viewed) {
    const PS = `/patchsets/${seg(viewed)}`;
    // The readiness answer carries the attestation it judged: the selected patchset's of an
    // open change. Any other (a closed change's, another patchset's) is read from its route,
    // which answers 404 when there is none.
    const fromReadiness = OPEN.includes(change.status) && viewed === change.selected_patchset_id && readiness.data;
    const [policy, ci, attestation] = await Promise.all([
      settle(P(`${PS}/policy`).then((r) => r.policy)),
      settle(P(`/read/patchsets/${seg(viewed)}/ci-status?recent_limit=10`)),
      fromReadiness
        ? { data: readiness.data.attestation ?? null, error: null }
        : settle(P(`${PS}/attestation`).then((r) => r.attestation, (e) => { if (notFound(e)) return null; throw e; })),
    ]);
    evidence = { policy, ci, attestation };
  }
  const authors = await pushedAuthors(repo, patchsets.data ?? []);
  return { change, patchsets, reviews, readiness, task, viewed, missing, evidence, queue, landed, reviewers, attention, authors };
}

/** The diff of a patchset as DiffSection reads it (a patchset's diff never changes: it may be read early). */
const diffUrl = (repo, viewed, against, whitespace) => repoPath(repo, `/read/patchsets/${seg(viewed)}/diff${query({ against: against || undefined, whitespace: whitespace || undefined })}`);
/** Diffs read beside the page's other reads, by URL, until DiffSection takes them; and every URL read so (once per page load). */
const earlyDiffs = new Map();
const readEarly = new Set();

/**
 * Starts reading the diff the page will show as soon as the change is known, beside the other
 * reads rather than after them (the diff is the slowest read of a large change). Only the first
 * read of the page does it; a read that fails is left to DiffSection to make again.
 */
function readDiffEarly(repo, viewed) {
  if (!viewed || new URLSearchParams(location.search).get('against')) return;
  const url = diffUrl(repo, viewed, null, storedWhitespace());
  if (readEarly.has(url)) return;
  readEarly.add(url);
  const p = get(url);
  p.catch(() => earlyDiffs.delete(url));
  earlyDiffs.set(url, p);
}

function readDiff(url) {
  const early = earlyDiffs.get(url);
  earlyDiffs.delete(url);
  return early ? early.catch(() => get(url)) : get(url);
}

/** Pushed patchsets whose commit's author the page reads (the newest; older ones say only who pushed them). */
const MAX_AUTHOR_READS = 100;
/** Commit authors read, by repository and snapshot (a commit never changes): a live refresh reads none again. */
const commitAuthors = new Map();

/**
 * The author each pushed patchset's commit names, by patchset id: what the pusher's git wrote,
 * which anyone can set ("Linus Torvalds"), shown beside `pushed_by`, who cairn knows pushed it
 * (docs/git.md "Who pushed"). Read from the commit's git record; a read that fails leaves it out.
 */
async function pushedAuthors(repo, patchsets) {
  const pushed = patchsets.filter((p) => p.pushed_by).slice(-MAX_AUTHOR_READS);
  const rows = await Promise.all(pushed.map(async (p) => {
    const key = `${repo}:${p.revision_snapshot_id}`;
    let read = commitAuthors.get(key);
    if (!read) {
      read = get(repoPath(repo, `/git/snapshots/${seg(p.revision_snapshot_id)}`)).then((r) => r.git_commit.author, () => {
        commitAuthors.delete(key);
        return null;
      });
      commitAuthors.set(key, read);
      if (commitAuthors.size > 4 * MAX_AUTHOR_READS) commitAuthors.delete(commitAuthors.keys().next().value);
    }
    return [p.patchset_id, await read];
  }));
  return new Map(rows.filter(([, a]) => a));
}

/** Whether a commit author is the pusher: the identity is the author's name, email, or the email's local part (case aside). */
function isPusher(author, pusher) {
  const who = pusher.toLowerCase();
  const email = (author.email ?? '').toLowerCase();
  return [(author.name ?? '').toLowerCase(), email, email.split('@')[0]].includes(who);
}

/**
 * Who a patchset is by. A pushed one: "pushed by NAME" (the identity the trusted ingress named),
 * and before it, when the commit names someone else as its author, "authored by AUTHOR" marked
 * as the commit's claim, so a forged author is seen. Any other: "by AUTHOR" as recorded.
 */
function PatchsetBy({ ps, author }) {
  if (!ps.pushed_by) return ps.author ? html`<span class="ps-by">by ${ps.author}</span>` : null;
  const other = author && !isPusher(author, ps.pushed_by);
  return html`<span class="ps-by">${other ? html`<span class="authored-by warn-text" title=${`The commit names ${author.name} <${author.email}> as its author: what the pusher's git wrote, which anyone can set. ${ps.pushed_by} pushed it.`}>authored by ${author.name}</span> · ` : null}<span class="pushed-by" title="who pushed it, as the server's trusted ingress named them">pushed by <strong>${ps.pushed_by}</strong></span></span>`;
}

// ---------------------------------------------------------------- panels

/** A human label for every `blocked_by` a readiness answer can name (READINESS_BLOCKERS in lib/http/handlers/diffs.ts). */
export const BLOCKED = {
  change_not_open: 'The change is closed',
  no_patchset: 'The change has no patchset',
  patchset_not_selected: 'The selected patchset cannot land',
  land_not_allowed: 'You may not land in this repository (its land_allowed rule)',
  blocked_by_policy: 'The policy does not pass',
  blocked_by_review: 'A reviewer blocks it',
  approvals_required: 'It needs more approvals',
  code_owners_required: 'It needs a code owner\'s approval',
  blocked_by_ci: 'CI has not passed',
  unresolved_threads: 'Comment threads are unresolved',
  target_line_unavailable: 'The target line cannot take a land',
  stale_base: 'The target line has no head to land onto',
  conflict: 'It conflicts with the target line',
  queue_required: 'It must land through the land queue',
  blocked_by_change_below: 'The change below it in its stack has not landed',
};

const CONFLICT_KINDS = {
  content: 'both sides changed the same lines',
  'delete/modify': 'deleted on one side, changed on the other',
  'add/add': 'added on both sides with different content',
  mode: 'the file mode changed differently on the two sides',
  symlink: 'a symlink changed on both sides',
  'file/directory': 'a file on one side, a directory on the other',
};

/**
 * Where a conflicting path leads: the file in the diff of the selected patchset (this page's
 * `#file=` when it shows that patchset), or null when the patchset does not change that file
 * (a conflict can also come from a file only the line changed).
 */
function conflictHref(repo, d, path) {
  const ps = (d.patchsets.data ?? []).find((p) => p.patchset_id === d.readiness.data?.selected_patchset_id);
  if (!ps) return null;
  const listed = (ps.changed_files ?? []).some((f) => f.path === path);
  if (!listed && !ps.changed_files_truncated) return null;
  const hash = `#file=${encodeURIComponent(path)}`;
  return d.viewed === ps.patchset_id ? hash : `${ui.change(repo, d.change.change_id)}${hash}`;
}

/** The dry run of the land's merge onto the line's head: conflicting paths (linked to the diff), or not checked. */
function MergeConflicts({ repo, d, merge }) {
  const more = merge.conflicts_count - merge.conflicts.length;
  return html`<div class="merge-conflicts">
    <p class="conflicts-head"><strong>${plural(merge.conflicts_count, 'conflicting path')}</strong> merging onto the head of <${LineLink} repo=${repo} name=${merge.target_line} /> (<${Snap} repo=${repo} id=${merge.head_snapshot_id} />):</p>
    <ul class="conflict-list">${merge.conflicts.map((c) => {
      const href = conflictHref(repo, d, c.path);
      return html`<li data-conflict=${c.path}>${href ? html`<a class="path-link" href=${href}><code>${c.path}</code></a>` : html`<code>${c.path}</code>`} <span class="muted small" title=${CONFLICT_KINDS[c.kind] ?? ''}>${c.kind}</span></li>`;
    })}</ul>
    ${more > 0 ? html`<p class="muted small">and ${plural(more, 'more path')}.</p>` : null}
    <p class="muted small">Rebase the change onto the line's head and push a new patchset; every land mode refuses it as it is.</p>
  </div>`;
}

/**
 * What the merge onto the line's head says, in words that never contradict the mark: a stale
 * base that merges cleanly is a neutral fact (the land merges onto the moved head), a merge too
 * large to check says so without blocking. Conflicts are listed by MergeConflicts.
 */
function MergeNote({ r }) {
  const m = r.merge;
  if (!m) return null;
  const line = m.target_line;
  if (m.status === 'clean') {
    return r.base_stale ? html`<p class="merge-note">${line} moved since this patchset's base; it merges cleanly.</p>` : null;
  }
  if (m.status === 'unchecked') {
    return html`<p class="merge-note">${r.base_stale ? `${line} moved since this patchset's base; w` : 'W'}hether it merges onto ${line}'s head was not checked (the merge is too large to check here); the land itself decides.${m.note ? html` <span class="muted small">${m.note}</span>` : null}</p>`;
  }
  return null;
}

const MERGE_FACT = { clean: 'clean', conflict: 'conflict', unchecked: 'not checked' };

/** A landed change: the land that landed it, where and when, and the snapshot it made. */
function LandedPanel({ repo, change, landed, retry, busy }) {
  const l = landed?.data ?? null;
  const at = l?.finished_at_s ?? change.landed_at_s;
  const line = l?.target_line ?? change.land_target_line ?? change.base_line;
  return html`<section class="readiness landed" aria-label="Land readiness">
    <div class="readiness-head">
      <span class="big-mark" aria-hidden="true">✓</span>
      <div>
        <h2>Landed${l ? html`: <a href=${ui.land(repo, l.land_id)}>${l.land_id}</a>` : null} into <${LineLink} repo=${repo} name=${line} />${at ? html` at <time datetime=${new Date(at * 1000).toISOString()}>${dateTime(at)}</time>` : null}</h2>
        ${l ? html`<p class="reason">Landed snapshot <${Snap} repo=${repo} id=${l.landed_snapshot_id} /> (${(l.line_action ?? l.mode).replace(/_/g, ' ')} of <${PsLink} repo=${repo} id=${l.patchset_id} />)</p>`
          : change.landed_via ? html`<p class="reason">Landed by a history promotion.</p>` : null}
        ${landed?.error ? html`<${PartError} error=${landed.error} what="the land" retry=${retry} busy=${busy} />` : null}
      </div>
    </div>
  </section>`;
}

/** "Why can't this land": the land's own gates, judged on the evidence as it stands. */
function Readiness({ repo, d, retry, busy }) {
  const c = d.change;
  if (c.status === 'landed') return html`<${LandedPanel} repo=${repo} change=${c} landed=${d.landed} retry=${retry} busy=${busy} />`;
  if (!OPEN.includes(c.status)) {
    return html`<section class="readiness closed" aria-label="Land readiness"><div class="readiness-head">
      <span class="big-mark" aria-hidden="true">–</span>
      <div><h2>Closed: ${c.status}</h2><p class="reason">The change takes no more reviews or lands.</p></div>
    </div></section>`;
  }
  if (d.readiness.error) return html`<section class="readiness unknown" aria-label="Land readiness"><${PartError} error=${d.readiness.error} what="whether it can land" retry=${retry} busy=${busy} /></section>`;
  const r = d.readiness.data;
  const failing = (r.policy?.checks ?? []).filter((c) => c.status === 'fail');
  // The mark follows can_land alone, and can_land is false whenever the merge conflicts (the
  // server's rule): a conflicting change never shows a green ✓.
  const ok = r.can_land && r.merge?.status !== 'conflict';
  return html`<section class=${`readiness ${ok ? 'ok' : 'no'}`} aria-label="Land readiness">
    <div class="readiness-head">
      <span class="big-mark" aria-hidden="true">${ok ? '✓' : '✗'}</span>
      <div>
        <h2>${ok ? 'Ready to land' : html`Can't land: ${BLOCKED[r.blocked_by] ?? 'it is refused'} <code class="blocked-by" title="blocked_by">${r.blocked_by}</code>`}</h2>
        ${r.reason ? html`<p class="reason">${r.reason}</p>` : null}
        <${MergeNote} r=${r} />
      </div>
    </div>
    ${r.merge?.status === 'conflict' ? html`<${MergeConflicts} repo=${repo} d=${d} merge=${r.merge} />` : null}
    <div class="readiness-facts">
    ${failing.length ? html`<ul class="checks">${failing.map((c) => html`<li title=${c.explanation}><${Badge} value=${c.status} /> <strong>${c.name.replace(/_/g, ' ')}</strong> <span class="muted explanation">${c.explanation}</span></li>`)}</ul>` : null}
    ${r.review || r.ci || r.merge ? html`<dl class="facts">
      ${r.merge ? html`<div><dt>Merge</dt><dd class="merge-fact"><${Badge} value=${MERGE_FACT[r.merge.status] ?? r.merge.status} tone=${r.merge.status === 'conflict' ? 'bad' : r.merge.status === 'clean' ? 'good' : 'plain'} title=${`a dry run of the land's merge onto the head of ${r.merge.target_line}`} /></dd></div>` : null}
      ${r.ci ? html`<div><dt>CI</dt><dd><${Badge} value=${r.ci.overall} /> ${r.ci.ci_run_sequence ? html`<span class="muted">run ${r.ci.ci_run_sequence}</span>` : null}</dd></div>` : null}
      ${r.review ? html`<div><dt>Reviews</dt><dd><span class="good-text">${plural(r.review.approvals ?? 0, 'approval')}</span>, <span class=${r.review.blocking ? 'bad-text' : ''}>${r.review.blocking ?? 0} blocking</span></dd></div>` : null}
      <div><dt>Attestation</dt><dd>${r.attestation ? html`<${Badge} value=${r.attestation.revoked ? 'revoked' : r.attestation.verification_state} tone=${r.attestation.revoked ? 'bad' : undefined} />` : html`<span class="muted">none</span>`}</dd></div>
      <div><dt>Policy</dt><dd class="policy-now">judged now: <${Badge} value=${r.policy?.decision ?? 'pending'} title="the policy evaluated on the evidence as it stands; nothing is recorded by asking" /></dd></div>
      <${Requirements} r=${r} />
    </dl>` : null}
    </div>
  </section>`;
}

/**
 * What a land needs here (a fact of the row that opens): one line per gate and repository rule as the server judges it now
 * (readiness `requirements`), each saying who can satisfy it; and a CODEOWNERS file's problems,
 * which block under the code-owners rule (docs/api.md "Repository rules").
 */
const RULE_KINDS = ['land_not_allowed', 'approvals_required', 'code_owners_required'];

function Requirements({ r }) {
  const reqs = r.requirements ?? [];
  const co = r.code_owners;
  // Without a repository rule the gates are the row's own facts (Policy, Reviews, CI): nothing to add.
  if (!reqs.some((q) => RULE_KINDS.includes(q.kind)) && !co?.problem_count) return null;
  const needed = reqs.filter((q) => !q.satisfied).length;
  // A fact of the row, opened on demand: the head stays compact and the diff stays near the top.
  return html`<div class="requirements-fact"><dt>Needs</dt><dd><details class="requirements">
    <summary>${needed ? html`<span class="bad-text">${needed} of ${reqs.length} needed</span>` : html`<span class="good-text">all ${reqs.length} met</span>`}${co?.problem_count ? html` · <span class="bad-text">CODEOWNERS: ${plural(co.problem_count, 'problem')}</span>` : null}</summary>
    ${reqs.length ? html`<ul class="requirement-list" aria-label="What a land needs">${reqs.map((q) => html`<li class=${q.satisfied ? 'met' : 'unmet'} data-kind=${q.kind}>
      <${Badge} value=${q.satisfied ? 'met' : 'needed'} tone=${q.satisfied ? 'good' : 'bad'} /> ${q.message}${!q.satisfied && q.who?.length ? html` <span class="muted">— ${q.who.join(', ')}</span>` : null}
    </li>`)}</ul>` : null}
    ${co?.problem_count ? html`<p class="bad-text codeowners-problems"><strong>${co.path}</strong>: ${co.problems.map((p) => `line ${p.line}: ${p.message}`).join('; ')}</p>` : null}
  </details></dd></div>`;
}

const ACTION_LABEL = {
  request: 'requested review', comment: 'commented', task_comment: 'commented', code_review_summary: 'summarized', approve: 'approved', task_approve: 'approved',
  request_changes: 'requested changes', task_request_changes: 'requested changes', defer: 'deferred', task_defer: 'deferred', dismiss: 'dismissed their vote',
};
const ACTION_TONE = { approve: 'good', task_approve: 'good', request_changes: 'bad', task_request_changes: 'bad', request: 'accent', dismiss: 'plain' };
const VOTES = ['approve', 'task_approve', 'request_changes', 'task_request_changes'];
/** A record that is a vote (docs/api.md "Reviews"): an approval or a block (any action with `blocking`). */
const isVote = (r) => r.blocking || VOTES.includes(r.action);

/**
 * Why a vote does not count now (the API's `live` is false): a later vote or dismissal of the
 * same reviewer replaced it, or (an approval) it was given on content that differs from the
 * selected patchset's. Null for a live vote and for records that are not votes.
 */
function voteStatus(r, later) {
  if (!isVote(r) || r.live) return null;
  const next = later.find((x) => x.reviewer === r.reviewer && (isVote(x) || x.action === 'dismiss'));
  if (next) return next.action === 'dismiss'
    ? { value: 'dismissed', title: `${r.reviewer} dismissed this vote later` }
    : { value: 'superseded', title: `replaced by ${r.reviewer}'s later vote` };
  if (r.stale) return { value: 'stale', title: 'given on a patchset whose content differs from the selected one: it counts nowhere' };
  return { value: 'not counted', title: 'not a live vote on the selected patchset' };
}

function Reviews({ repo, reviews }) {
  const list = reviews.reviews;
  return html`<${Card} title="Reviews and comments" id="reviews" right=${html`<span class="muted"><span class="good-text">${plural(reviews.approvals, 'approval')}</span> · <span class=${reviews.blocking ? 'bad-text' : ''}>${reviews.blocking} blocking</span> · ${plural(reviews.comments, 'comment')}</span>`}>
    ${list.length === 0 ? html`<${Empty}>No review yet.</${Empty}>` : html`<ol class="timeline">${list.map((r, i) => {
      const status = voteStatus(r, list.slice(i + 1));
      const blocking = r.blocking && !status;
      const tone = status ? 'plain' : blocking ? 'bad' : ACTION_TONE[r.action] ?? 'plain';
      return html`<li class=${`event ev-${tone}`} data-review=${r.review_id}>
      <div class="event-head">
        <strong class="who">${r.action === 'request' ? r.requested_by ?? 'someone' : r.reviewer}</strong>
        <span>${ACTION_LABEL[r.action] ?? r.action}${r.action === 'request' ? (r.reviewer_group ? html` from the <strong class="group-name">${r.reviewer_group}</strong> group` : html` from <strong class="person-name">${r.reviewer}</strong>`) : null}</span>
        ${blocking ? html`<${Badge} value="blocking" tone="bad" title="a live block: the change cannot land until its reviewer approves or dismisses it" />` : null}
        ${status ? html`<${Badge} value=${status.value} tone="plain" title=${status.title} />` : null}
        <span class="muted">on <${PsLink} repo=${repo} id=${r.patchset_id} /> · <${Time} s=${r.created_at_s} /></span>
      </div>
      ${r.comment ? html`<div class="comment">${r.comment}</div>` : null}
    </li>`;
    })}</ol>`}
  </${Card}>`;
}

/** The policy's checks as readiness judges them now (the head shows the failing ones by name; here with their explanations). */
function JudgedNow({ d }) {
  const r = d.readiness.data;
  if (!r || !OPEN.includes(d.change.status) || !(r.policy?.checks ?? []).length) return null;
  return html`<${Card} title="Policy judged now" id="judged" right=${html`<${Badge} value=${r.policy.decision ?? 'pending'} title="evaluated on the evidence as it stands; nothing is recorded by asking" />`}>
    <ul class="checks">${r.policy.checks.map((c) => html`<li class=${`check ${c.status}`}>
      <${Badge} value=${c.status} /> <strong>${c.name.replace(/_/g, ' ')}</strong>
      <div class="muted explanation">${c.explanation}</div>
    </li>`)}</ul>
  </${Card}>`;
}

function Policy({ policy }) {
  const recorded = policy.checks.length > 0 && !!policy.decision_id;
  return html`<${Card} title="Policy" id="policy" right=${html`<span class="policy-recorded">last recorded decision: ${recorded ? html`<${Badge} value=${policy.decision} />` : html`<span class="muted">none</span>`}</span>`}>
    ${!recorded
      ? html`<${Empty}>No decision recorded for this patchset yet. <em>Evaluate policy</em> records one; the land evaluates it anyway, on the evidence as it stands then.</${Empty}>`
      : html`<ul class="checks">${policy.checks.map((c) => html`<li class=${`check ${c.status}`}>
          <${Badge} value=${c.status} /> <strong>${c.name.replace(/_/g, ' ')}</strong>
          <div class="muted explanation">${c.explanation}</div>
        </li>`)}</ul>
        <p class="muted small">Decision <code>${policy.decision_id}</code> (${policy.trigger === 'land' ? 'recorded by a land' : 'evaluated'}) <${Time} s=${policy.evaluated_at_s} /></p>`}
  </${Card}>`;
}

function Ci({ repo, ci }) {
  const jobs = ci.recent_jobs ?? [];
  if (!ci.ci_run_sequence && jobs.length === 0) return html`<${Card} title="CI" id="ci" right=${html`<${Badge} value="none" />`}><${Empty}>No CI run yet: <em>Run CI</em> queues one for a runner.</${Empty}></${Card}>`;
  return html`<${Card} title="CI" id="ci" right=${html`<${Badge} value=${ci.overall ?? ci.availability} />`}>
    <dl class="facts">
      <div><dt>Run</dt><dd>${ci.ci_run_sequence ?? '—'}</dd></div>
      <div><dt>Status</dt><dd>${ci.status ?? '—'}</dd></div>
      <div><dt>Tests</dt><dd><${Badge} value=${ci.tests ?? 'none'} /></dd></div>
      <div><dt>Lint</dt><dd><${Badge} value=${ci.lint ?? 'none'} /></dd></div>
    </dl>
    ${ci.counts ? html`<p class="suites">Suites: <strong>${ci.counts.suites}</strong> · <span class="good-text">${ci.counts.passed} passed</span> · <span class=${ci.counts.failed ? 'bad-text' : ''}>${ci.counts.failed} failed</span>${ci.counts.blocking_failed ? html` · <span class="bad-text">${ci.counts.blocking_failed} blocking</span>` : null}</p>` : null}
    ${ci.selected_job?.ci?.suite_results?.length ? html`<ul class="checks suite-list">${ci.selected_job.ci.suite_results.map((s) => html`<li class=${`check ${s.status}`}><${Badge} value=${s.status} /> <code>${s.suite_id}</code>${s.blocking ? null : html` <span class="muted small">(not blocking)</span>`}</li>`)}</ul>` : null}
    ${jobs.length === 0 ? html`<${Empty}>No CI run yet.</${Empty}>` : html`<table class="table compact jobs">
      <thead><tr><th>Job</th><th>Run</th><th>Outcome</th><th>Suites</th><th>Updated</th></tr></thead>
      <tbody>${jobs.map((j) => html`<tr data-job=${j.worker_job_index}>
        <td><a href=${ui.job(repo, j.worker_job_index)}>#${j.worker_job_index}</a></td>
        <td class="num">${j.run_sequence ?? '—'}</td>
        <td><${JobOutcome} j=${j} /></td>
        <td>${j.ci ? html`${j.ci.suite_result_count - j.ci.failed_suite_count}/${j.ci.suite_result_count}${j.ci.blocking_failure_count ? html` <span class="bad-text">(${j.ci.blocking_failure_count} blocking)</span>` : null}` : html`<span class="muted">—</span>`}</td>
        <td><${Time} s=${j.updated_at_s} /></td>
      </tr>`)}</tbody></table>`}
  </${Card}>`;
}

function Attestation({ a, repo, d, access, onDone }) {
  const open = OPEN.includes(d.change.status) && !!d.viewed;
  return html`<${Card} title="Attestation" id="attestation" right=${a ? html`<${Badge} value=${a.revoked ? 'revoked' : a.verification_state} tone=${a.revoked ? 'bad' : undefined} />` : null}>
    ${!a ? html`<${Empty}>No attestation for this patchset yet; ${open && access.may('attestations.put') ? 'record one below (or with' : 'a contributor records one here (or with'} <code>cairn attest</code>).</${Empty}>` : html`<dl class="facts">
      <div><dt>Author mode</dt><dd>${a.author_mode.replace(/_/g, ' ')}</dd></div>
      <div><dt>Verification</dt><dd><${Badge} value=${a.verification_state} /></dd></div>
      <div><dt>Requires</dt><dd>${[a.require_tests_pass && 'tests', a.require_lint_pass && 'lint', a.require_human_review && 'human review'].filter(Boolean).join(', ') || 'nothing more'}</dd></div>
      ${a.ci_backed !== undefined ? html`<div><dt>CI backed</dt><dd>${a.ci_backed ? 'yes' : 'no'}</dd></div>` : null}
      <div><dt>Recorded</dt><dd><code>${a.attestation_id}</code> <${Time} s=${a.created_at_s} /></dd></div>
    </dl>`}
    ${open && access.may('attestations.put') ? html`<${AttestForm} key=${d.viewed} repo=${repo} d=${d} a=${a} onDone=${onDone} />` : null}
  </${Card}>`;
}

const VERIFICATION = [['pass', 'pass: it was checked and holds'], ['fail', 'fail: it was checked and does not hold'], ['pending', 'pending: checking is under way'], ['unknown', 'unknown: not checked']];

/**
 * Record the shown patchset's attestation (PUT patchsets/{id}/attestation; docs/api.md
 * "Attestation"): how it was verified and what the land must also see (tests, lint, a human
 * review). The author mode is the patchset's own (the server refuses another). A new record
 * replaces the last one; "revoke" records one that no longer vouches.
 */
function AttestForm({ repo, d, a, onDone }) {
  const ps = (d.patchsets.data ?? []).find((p) => p.patchset_id === d.viewed) ?? null;
  const [state, setState] = useState(a && !a.revoked ? a.verification_state : 'pass');
  const [tests, setTests] = useState(a ? !!a.require_tests_pass : true);
  const [lint, setLint] = useState(a ? !!a.require_lint_pass : false);
  const [human, setHuman] = useState(a ? !!a.require_human_review : false);
  const [busy, setBusy] = useState(false);
  const [flash, setFlash] = useState(null);
  const submit = async (revoked) => {
    setBusy(true);
    setFlash(null);
    try {
      const body = { verification_state: state, require_tests_pass: tests, require_lint_pass: lint, require_human_review: human, ...(revoked ? { revoked: true } : {}) };
      const r = await api('PUT', repoPath(repo, `/patchsets/${seg(d.viewed)}/attestation`), body);
      setFlash({ ok: true, text: `${revoked ? 'Revoked' : 'Recorded'} ${r.attestation.attestation_id} (${r.attestation.verification_state}).` });
      onDone();
    } catch (err) {
      setFlash({ ok: false, text: `${err.status ? `HTTP ${err.status}: ` : ''}${err.message}` });
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="attest-form" onSubmit=${(e) => { e.preventDefault(); submit(false); }} aria-label="Record an attestation">
    <h3 class="small-head">${a ? 'Record a new attestation' : 'Record an attestation'} of <code>${d.viewed.replace(/^.*\./, '')}</code></h3>
    ${ps ? html`<p class="muted small">Author mode: <strong>${ps.author_mode.replace(/_/g, ' ')}</strong> (the patchset's own)</p>` : null}
    <label class="field"><span>Verification</span>
      <select name="verification_state" value=${state} onChange=${(e) => setState(e.currentTarget.value)}>
        ${VERIFICATION.map(([v, label]) => html`<option value=${v}>${label}</option>`)}
      </select>
    </label>
    <fieldset class="attest-requires"><legend>The land must also see</legend>
      <label class="check"><input type="checkbox" name="require_tests_pass" checked=${tests} onChange=${(e) => setTests(e.currentTarget.checked)} /> tests pass</label>
      <label class="check"><input type="checkbox" name="require_lint_pass" checked=${lint} onChange=${(e) => setLint(e.currentTarget.checked)} /> lint passes</label>
      <label class="check"><input type="checkbox" name="require_human_review" checked=${human} onChange=${(e) => setHuman(e.currentTarget.checked)} /> a human review</label>
    </fieldset>
    ${flash ? html`<div class=${`flash ${flash.ok ? 'ok' : 'bad'}`} role=${flash.ok ? 'status' : 'alert'}>${flash.text}</div>` : null}
    <div class="btn-row">
      <button type="submit" class="btn primary attest-submit" disabled=${busy}>${busy ? 'Recording…' : 'Record attestation'}</button>
      ${a && !a.revoked ? html`<button type="button" class="btn danger" disabled=${busy} onClick=${() => submit(true)} title="Record that this attestation no longer vouches for the patchset">Revoke</button>` : null}
    </div>
  </form>`;
}

// ---------------------------------------------------------------- patchsets and the diff

function psLabel(p, change) {
  const tags = [];
  if (p.patchset_id === change.selected_patchset_id) tags.push('selected');
  if (p.patchset_id === change.current_patchset_id) tags.push('latest');
  if (p.withdrawn) tags.push('withdrawn');
  return `${p.patchset_id.replace(/^.*\./, '')}${tags.length ? ` (${tags.join(', ')})` : ''} — ${subject(p.summary)}`;
}

/** A summary's first line: a pushed patchset's summary is its whole commit message, a selector shows its subject. */
const subject = (summary) => String(summary ?? '').split('\n', 1)[0].trim();

/**
 * The reader's viewed marks on the shown patchset (GET / PUT changes/{ref}/viewed): a Set of
 * paths, `toggle(path, on)` (asks the name first; the mark shows at once and goes back if the
 * server refuses), and the patchset the reader last voted on (for "changes since your last review").
 * Without a name, or when the route answers an error, there are no marks and the page says why on toggle.
 */
function useViewed(repo, changeId, patchset, me) {
  const [state, setState] = useState({ paths: new Set(), last: null, error: null });
  const ask = useRef(0);
  useEffect(() => {
    const mine = ++ask.current;
    setState({ paths: new Set(), last: null, error: null });
    if (!me || !patchset) return;
    get(repoPath(repo, `/changes/${seg(changeId)}/viewed${query({ user: me, patchset })}`)).then(
      (r) => { if (ask.current === mine) setState({ paths: new Set(r.paths ?? []), last: r.last_reviewed_patchset_id ?? null, error: null }); },
      (e) => { if (ask.current === mine) setState((s) => ({ ...s, error: e })); },
    );
  }, [repo, changeId, patchset, me]);
  const toggle = useCallback(async (path, on) => {
    const user = me || await reviewerName();
    if (!user) return false;
    const flip = (yes) => setState((s) => {
      const paths = new Set(s.paths);
      if (yes) paths.add(path);
      else paths.delete(path);
      return { ...s, paths };
    });
    flip(on);
    try {
      const r = await api('PUT', repoPath(repo, `/changes/${seg(changeId)}/viewed`), { user, patchset_id: patchset, path, viewed: on });
      // the server's answer is the patchset's marks as they now stand
      setState((s) => ({ ...s, paths: new Set(r.paths ?? []), error: null }));
      return true;
    } catch (e) {
      flip(!on);
      setState((s) => ({ ...s, error: e }));
      return false;
    }
  }, [repo, changeId, patchset, me]);
  return { ...state, toggle };
}

function DiffSection({ repo, d, viewed, against, view, setParams, me, active, onShow, canMark = true }) {
  const patchsets = d.patchsets.data ?? [];
  // ?against= naming no patchset of this change: compare with the base, and say so.
  const unknownAgainst = against && d.patchsets.data && !patchsets.some((p) => p.patchset_id === against) ? against : null;
  const vs = unknownAgainst ? null : against;
  const [whitespace, setWhitespace] = useState(storedWhitespace);
  const diff = useAsync(
    () => readDiff(diffUrl(repo, viewed, vs, whitespace)),
    [repo, viewed, vs, whitespace],
  );
  const onWhitespace = (v) => {
    try {
      if (v) localStorage.setItem(WS_KEY, v);
      else localStorage.removeItem(WS_KEY);
    } catch {
      /* storage disabled: the choice lasts as long as the page */
    }
    setWhitespace(v);
  };
  const marks = useViewed(repo, d.change.change_id, viewed, me);
  const others = patchsets.filter((p) => p.patchset_id !== viewed);
  const onView = useCallback((v) => {
    try {
      localStorage.setItem(VIEW_KEY, v);
    } catch {
      /* storage disabled */
    }
    setParams({ view: v === 'split' ? 'split' : null });
  }, [setParams]);
  // "Changes since your last review": the inter-patchset diff from the patchset you last voted on.
  const since = marks.last && marks.last !== viewed && patchsets.some((p) => p.patchset_id === marks.last) ? marks.last : null;
  const toolbar = html`
      <label class="field inline"><span>Patchset</span>
        <select value=${viewed} onChange=${(e) => setParams({ ps: e.currentTarget.value === d.change.selected_patchset_id ? null : e.currentTarget.value, against: null })}>
          ${(patchsets.length ? patchsets : [{ patchset_id: viewed, summary: '' }]).map((p) => html`<option value=${p.patchset_id}>${psLabel(p, d.change)}</option>`)}
        </select>
      </label>
      <label class="field inline"><span>compared with</span>
        <select value=${vs ?? ''} onChange=${(e) => setParams({ against: e.currentTarget.value || null })} aria-label="Compare with">
          <option value="">its base</option>
          ${others.map((p) => html`<option value=${p.patchset_id}>${p.patchset_id.replace(/^.*\./, '')} — ${subject(p.summary)}</option>`)}
        </select>
      </label>
      <select class="ws-select" value=${whitespace} onChange=${(e) => onWhitespace(e.currentTarget.value)} aria-label="Whitespace" title="Whitespace changes (remembered in this browser)">
        ${WHITESPACE.map(([k, label]) => html`<option value=${k}>${label}</option>`)}
      </select>
      ${since && since !== vs ? html`<button type="button" class="btn small since-review" onClick=${() => setParams({ against: since })} title=${`The inter-patchset diff from ${since}, the patchset you last voted on`}>Changes since your last review (${since.replace(/^.*\./, '')})</button>` : null}
      ${vs ? html`<span class="muted vs-note">changes from <code>${vs.replace(/^.*\./, '')}</code> to <code>${viewed.replace(/^.*\./, '')}</code></span>` : null}`;
  return html`<section class="files-section" id="files" aria-label="Files">
    ${unknownAgainst ? html`<p class="note-box missing-note" role="alert">This change has no patchset <code>${unknownAgainst}</code> to compare with: the diff below is against the base of <code>${viewed}</code>. <a href=${ui.change(repo, d.change.change_id, { ps: viewed === d.change.selected_patchset_id ? null : viewed })}>Drop the comparison</a></p>` : null}
    ${diff.data ? null : html`<div class="files-toolbar">${toolbar}</div>`}
    ${diff.error && !diff.data ? html`<${DiffError} error=${diff.error} retry=${diff.reload} busy=${diff.loading} />`
      : html`<${Async} state=${diff} what="the diff">${(x) => html`<${DiffView} repo=${repo} diff=${x} view=${view} onView=${onView} marks=${canMark ? marks : null} active=${active} onShow=${onShow} toolbar=${toolbar} whitespace=${whitespace || null} />`}</${Async}>`}
  </section>`;
}

/**
 * The diff could not be read: what the server (or a proxy before it) answered, its status and
 * reason phrase, a Retry, and the threads of the patchset listed all the same (they are not
 * placed on lines without the diff).
 */
function DiffError({ error, retry, busy }) {
  const T = useThreads();
  const status = error.status ? `HTTP ${error.status}${error.statusText ? ` ${error.statusText}` : ''}` : '';
  const text = status && error.message.startsWith(status) ? error.message : [status, error.message].filter(Boolean).join(': ');
  const threads = T?.data?.threads ?? [];
  return html`<div class="diff-error">
    <div class="part-error"><div class="error-note" role="alert"><strong>Could not load the diff: </strong><span class="diff-error-text">${text}</span></div>
      <button type="button" class="btn small" onClick=${retry} disabled=${busy}>${busy ? 'Retrying…' : 'Retry'}</button></div>
    ${threads.length ? html`<div class="diff-error-threads"><h3 class="small-head">${plural(threads.length, 'thread')} on this patchset</h3><${ThreadStack} threads=${threads} where=${true} /></div>` : null}
  </div>`;
}

function Patchsets({ repo, d, viewed }) {
  return html`<${Card} title="Patchsets" id="patchsets">
    <table class="table compact">
      <thead><tr><th>#</th><th>Summary</th><th>Files</th><th>Created</th></tr></thead>
      <tbody>${d.patchsets.data.map((p) => html`<tr class=${p.patchset_id === viewed ? 'current' : ''}>
        <td><a href=${ui.change(repo, d.change.change_id, { ps: p.patchset_id === d.change.selected_patchset_id ? null : p.patchset_id })}>${p.patchset_number}</a>
          ${p.patchset_id === d.change.selected_patchset_id ? html`<div><${Badge} value="selected" tone="accent" /></div>` : null}</td>
        <td class="wrap-cell">${p.summary}${p.author || p.pushed_by ? html` <span class="muted"><${PatchsetBy} ps=${p} author=${d.authors?.get(p.patchset_id)} /></span>` : null}${p.rebased_from ? html` <span class="muted rebased-from" title="Built by the server: that patchset's revision merged onto the line's head">· rebased from ${p.rebased_from.patchset_id.replace(/^.*\./, '')}${p.rebased_from.by ? ` by ${p.rebased_from.by}` : ''}</span>` : null}</td>
        <td class="num">${p.changed_file_stats?.files_changed ?? '—'}</td>
        <td><${Time} s=${p.created_at_s} /></td>
      </tr>`)}</tbody>
    </table>
    <${FetchCommand} repo=${repo} change=${d.change} ps=${d.patchsets.data.find((p) => p.patchset_id === (viewed ?? d.change.current_patchset_id))} />
  </${Card}>`;
}

/** A patchset's ref, refs/changes/<nn>/<change>/<ps> (docs/git.md "Fetch a patchset"). */
const patchsetRef = (sequence, number) => `refs/changes/${String(sequence % 100).padStart(2, '0')}/${sequence}/${number}`;

/** Gerrit's Download box: the command that fetches the shown patchset with git and checks it out (select it, or Copy). */
function FetchCommand({ repo, change, ps }) {
  const [copied, setCopied] = useState(null);
  if (!ps || typeof change.sequence !== 'number') return null;
  const text = `git fetch ${location.origin}${repoPath(repo, '/git.git')} ${patchsetRef(change.sequence, ps.patchset_number)} && git checkout FETCH_HEAD`;
  const copy = async (e) => {
    const code = e.currentTarget.parentElement.querySelector('code');
    try {
      await navigator.clipboard.writeText(text);
      setCopied('Copied');
    } catch {
      // No clipboard (plain http on another host): select it for Ctrl+C.
      const range = document.createRange();
      range.selectNodeContents(code);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      setCopied('Selected: press Ctrl+C');
    }
  };
  // The whole command shown, wrapped (a field would hide the ref, its end).
  return html`<div class="fetch-command" data-patchset=${ps.patchset_id}>
    <span class="muted small">Download ps-${ps.patchset_number}</span>
    <code class="fetch-text">${text}</code>
    <button type="button" class="btn small" onClick=${copy} aria-label=${`Copy the command that fetches patchset ${ps.patchset_number}`}>Copy</button>
    <span class="muted small" role="status">${copied}</span>
  </div>`;
}

/**
 * The tabs of the page (GitHub's Files / Conversation / Checks): the diff first, the talk and the
 * evidence one click away. `?tab=` keeps the choice in the URL; a `#name` of a card (a link to a
 * queue entry uses #queue) opens the tab that holds it. Actions, the land queue and the lands
 * stand beside both the Conversation and the Checks.
 */
const TABS = ['files', 'conversation', 'checks'];
const ANCHOR_TAB = {
  files: 'files', conversation: 'conversation', threads: 'conversation', description: 'conversation', people: 'conversation', reviews: 'conversation', patchsets: 'conversation', actions: 'conversation', stack: 'conversation',
  policy: 'checks', ci: 'checks', attestation: 'checks', queue: 'checks', lands: 'checks',
};
/** The tab a hash asks for: `#file=…` the Files, a card's name its tab, else null. */
function tabOfHash(hash) {
  if (/^#file=/.test(hash)) return 'files';
  return ANCHOR_TAB[hash.slice(1)] ?? null;
}

function Tabs({ tabs, tab, onTab }) {
  // arrow keys move between the tabs (the WAI-ARIA tabs pattern); Enter / click opens one
  const onKeyDown = (e) => {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
    const i = tabs.findIndex((t) => t.id === tab);
    const next = tabs[(i + (e.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length];
    e.preventDefault();
    onTab(next.id);
    requestAnimationFrame(() => document.getElementById(`tabbtn-${next.id}`)?.focus());
  };
  return html`<div class="tabs" role="tablist" aria-label="Change" onKeyDown=${onKeyDown}>${tabs.map((t) => html`<button type="button" role="tab" class=${`tab${t.id === tab ? ' on' : ''}`}
      id=${`tabbtn-${t.id}`} aria-selected=${t.id === tab ? 'true' : 'false'} aria-controls=${`tab-${t.id}`} tabindex=${t.id === tab ? '0' : '-1'} onClick=${() => onTab(t.id)}>
      ${t.label}${t.count !== null && t.count !== undefined ? html` <span class="count-pill">${t.count}</span>` : null}${t.badge ? html` <${Badge} value=${t.badge} />` : null}
    </button>`)}</div>`;
}

/** Why it is someone's move, in words (reasons of GET read/changes/{ref}/attention). */
const TURN_REASONS = {
  review_requested: 'review requested',
  new_patchset: 'new patchset',
  blocking_vote: 'a reviewer blocks it',
  ci_failed: 'CI failed',
  ejected: 'left the land queue',
  conflict: 'conflicts with its line',
  reviewer_comment: 'a reviewer commented',
  owner_replied: 'the author replied',
};

/**
 * Whose move it is, in the head: "Your turn" when the page's person is among them, then every
 * name with its reason. The reasons come from the attention route; when that read failed, the
 * projection's `attention` names show without them.
 */
function Attention({ change, attention, me }) {
  const rows = attention.data ?? (change.attention ?? []).map((name) => ({ name, reason: null }));
  if (!OPEN.includes(change.status) || rows.length === 0) return null;
  const turn = !!me && rows.some((a) => a.name === me);
  return html`<p class="attention" data-testid="attention">
    ${turn ? html`<strong class="your-turn">Your turn</strong> ` : null}
    <span class="muted">Waiting on:</span> ${rows.map((a, i) => html`${i ? ', ' : ''}<span class=${`attn${a.name === me ? ' me' : ''}`} data-name=${a.name}><strong>${a.name}</strong>${a.reason ? ` (${TURN_REASONS[a.reason] ?? a.reason.replace(/_/g, ' ')})` : ''}</span>`)}
  </p>`;
}

const VOTE_LABEL = { approve: 'approves', block: 'blocks' };

/**
 * The reviewer table (Gerrit's label table, GitHub's reviewers sidebar): each reviewer asked and
 * each other voter, their current vote, the patchset it was cast on, and whether it counts on the
 * selected patchset (a vote that does not is greyed, "on ps-1").
 */
function Reviewers({ repo, rows, me }) {
  return html`<${Card} title="Reviewers" id="people" right=${html`<span class="count">${rows.length}</span>`}>
    ${rows.length === 0 ? html`<${Empty}>Nobody asked or voted yet.</${Empty}>` : html`<table class="table compact reviewer-table">
      <thead><tr><th>Reviewer</th><th>Vote</th><th>On</th></tr></thead>
      <tbody>${rows.map((r) => {
        const stale = !!r.vote && !r.live;
        return html`<tr class=${`reviewer${stale ? ' stale' : ''}${r.name === me ? ' me' : ''}`} data-reviewer=${r.name} data-kind=${r.kind} data-vote=${r.vote ?? ''} data-live=${r.vote ? String(!!r.live) : ''}>
          <td><strong>${r.name}</strong>${r.kind === 'group' ? html` <span class="muted small">group</span>` : null}</td>
          <td>${r.vote ? html`<${Badge} value=${VOTE_LABEL[r.vote] ?? r.vote} tone=${stale ? 'plain' : r.vote === 'approve' ? 'good' : 'bad'} title=${stale ? 'cast on a patchset whose content differs from the selected one: it does not count now' : 'counts on the selected patchset'} />`
            : html`<span class="muted">${r.kind === 'group' ? '—' : 'no vote'}</span>`}</td>
          <td>${r.patchset_id ? html`<span class=${stale ? 'muted' : ''}>${stale ? 'on ' : ''}<${PsLink} repo=${repo} id=${r.patchset_id} />${stale ? html` <span class="stale-note small">(not live)</span>` : null}</span>` : html`<span class="muted">—</span>`}</td>
        </tr>`;
      })}</tbody>
    </table>`}
  </${Card}>`;
}

/**
 * An open change whose selected patchset (what lands) is not its newest (a push with `-o
 * noselect`, a patchset added through the API, an earlier select): the head says so in one line,
 * with a link to the other one's diff and, for a caller who may, a button selecting the newest.
 */
function SelectedNote({ repo, d, access, onShown, onDone }) {
  const c = d.change;
  const selected = c.selected_patchset_id;
  const newest = c.current_patchset_id;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  if (!OPEN.includes(c.status) || !selected || !newest || selected === newest) return null;
  const short = (id) => id.replace(/^.*\./, '');
  const newestPs = (d.patchsets.data ?? []).find((p) => p.patchset_id === newest);
  const select = async () => {
    setBusy(true);
    setError(null);
    try {
      await api('POST', repoPath(repo, `/changes/${seg(c.change_id)}:selectPatchset`), { patchset_id: newest });
      onDone();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  // the link shows the other patchset's diff on the Files tab: the newest, or back to the selected
  const other = d.viewed === newest ? selected : newest;
  return html`<p class="selected-note" data-testid="selected-note" role="note">
    <span class="warn-text"><strong>${short(selected)}</strong> is selected — what lands; <strong>${short(newest)}</strong> is the newest.</span>
    <a class="view-ps" href=${ui.change(repo, c.change_id, { ps: other === selected ? null : other })} onClick=${onShown}>${other === newest ? `View ${short(newest)}'s diff` : `View the selected ${short(selected)}`}</a>
    ${access.may('changes.selectPatchset') && !newestPs?.withdrawn ? html`<button type="button" class="btn small select-newest" onClick=${select} disabled=${busy} title=${`Make ${newest} the patchset that reviews and lands act on`}>${busy ? 'Selecting…' : `Select ${short(newest)}`}</button>` : null}
    ${error ? html`<span class="bad-text small" role="alert">${error.status ? `HTTP ${error.status}: ` : ''}${error.message}</span>` : null}
  </p>`;
}

/** What the change is for: the task's intent and the shown patchset's summary, both Markdown. */
/**
 * The stack the change stands in (docs/git.md "Stacks"): the chain top first, as git log reads,
 * this change marked; a change below that is not landed blocks this one.
 */
function Stack({ repo, change }) {
  const stack = change.stack ?? [];
  if (stack.length === 0) return null;
  const at = stack.findIndex((e) => e.this);
  return html`<${Card} title="Stack" id="stack" right=${html`<span class="muted small">${at + 1} of ${stack.length} from the bottom</span>`}>
    <ol class="stack-list" reversed>
      ${[...stack].reverse().map((e) => html`<li key=${e.change_id} class=${e.this ? 'stack-this' : ''} aria-current=${e.this ? 'page' : undefined}>
        ${e.this ? html`<strong>${e.title}</strong> <span class="muted small">(this change)</span>` : html`<a href=${ui.change(repo, e.change_ref)}>${e.title}</a>`}
        <span class="muted small"> <code>${e.change_id}</code></span> <${Badge} value=${e.status} />
        ${e.outdated ? html` <span class="warn-text small" title=${`based on ${e.based_on_patchset_id}; the change below has a newer patchset: push the series again`}>outdated</span>` : null}
      </li>`)}
    </ol>
  </${Card}>`;
}

function Description({ repo, change, task, ps, author }) {
  const intent = task.data?.intent ?? '';
  return html`<${Card} title="Description" id="description" right=${ps ? html`<span class="muted">summary of <code>${ps.patchset_id.replace(/^.*\./, '')}</code>${ps.pushed_by ? html` · <${PatchsetBy} ps=${ps} author=${author} />` : ps.author ? html` <${PatchsetBy} ps=${ps} author=${author} />` : null}</span>` : null}>
    ${ps?.summary ? html`<div class="ps-summary"><${Markdown} text=${ps.summary} /></div>` : html`<${Empty}>No summary.</${Empty}>`}
    <p class="meta parts muted small"><span title="the base of the shown patchset">forked from <${Snap} repo=${repo} id=${ps?.base_snapshot_id ?? change.fork_snapshot_id} /></span><span>created <${Time} s=${change.created_at_s} /></span>${ps ? html`<span>patchset created <${Time} s=${ps.created_at_s} /></span>` : null}</p>
    ${task.error ? html`<${PartError} error=${task.error} what="the task" />` : intent ? html`<div class="task-intent"><h3 class="small-head">Intent of the task${task.data?.title ? html`: ${task.data.title}` : null}</h3><${Markdown} text=${intent} /></div>` : null}
  </${Card}>`;
}

export function ChangePage({ repo, changeRef }) {
  const loc = useLocation();
  const psParam = loc.params.get('ps');
  const against = loc.params.get('against') || null;
  const view = loc.params.get('view') === 'split' ? 'split' : loc.params.get('view') === 'unified' ? 'unified' : storedView();
  const state = useAsync(() => loadChange(repo, changeRef, psParam), [repo, changeRef, psParam]);
  const d = state.data;
  useLiveRefresh(repo, CHANGE_EVENTS, (event) => aboutChange(d, event), state.reload);
  const me = useIdentity().name;
  // what the viewer may do here (GET session?repository_index=): controls of the others are left out
  const access = useRepoAccess(repo);
  const canComment = access.may('comments.create');
  const [replying, setReplying] = useState(false);
  // The threads follow every read of the page (an event, an action): `version` is the page's data.
  const threads = useThreadState({
    repo,
    change: d?.change ?? { change_id: changeRef },
    viewed: d?.viewed ?? null,
    selected: d?.change.selected_patchset_id ?? null,
    // a viewer who may not comment sees the threads as on a closed change: no editors
    open: !!d && OPEN.includes(d.change.status) && canComment,
    me,
    version: d,
    suggestions: true,
    // the change's author (the current patchset's; anyone when it names none) applies suggestions
    canApply: !!d && !!me && access.may('comments.applySuggestions') && (() => {
      const cur = (d.patchsets.data ?? []).find((p) => p.patchset_id === d.change.current_patchset_id);
      return !!cur && (!cur.author || cur.author === me);
    })(),
    onApplied: state.reload,
  });
  useTitle(d ? `${d.change.title} (${d.change.change_id})` : changeRef);
  const asked = loc.params.get('tab');
  const [tab, setTab] = useState(() => tabOfHash(location.hash) ?? (TABS.includes(asked) ? asked : 'files'));
  // #queue, #reviews, ...: open the tab holding that card and scroll to it once the page has been
  // read, and again whenever a link changes the hash (the diff handles #file=).
  const scrolled = useRef(false);
  useEffect(() => {
    if (!d) return undefined;
    const go = () => {
      const want = tabOfHash(location.hash);
      if (!want) return;
      setTab(want);
      const name = location.hash.slice(1);
      if (ANCHOR_TAB[name] && name !== 'files') requestAnimationFrame(() => document.getElementById(name)?.scrollIntoView());
    };
    if (!scrolled.current) {
      scrolled.current = true;
      go();
    }
    addEventListener('hashchange', go);
    return () => removeEventListener('hashchange', go);
  }, [d]);

  const setParams = useCallback((next) => {
    const p = new URLSearchParams(location.search);
    for (const [k, v] of Object.entries(next)) {
      if (v === null || v === undefined) p.delete(k);
      else p.set(k, v);
    }
    const qs = p.toString();
    navigate(`${location.pathname}${qs ? `?${qs}` : ''}${location.hash}`, { replace: true });
  }, []);
  const showTab = useCallback((t) => {
    setTab(t);
    const p = new URLSearchParams(location.search);
    if (t === 'files') p.delete('tab');
    else p.set('tab', t);
    const qs = p.toString();
    // a card's #name would open its tab again on the next load: the URL names the tab instead
    const hash = ANCHOR_TAB[location.hash.slice(1)] ? '' : location.hash;
    history.replaceState(history.state, '', `${location.pathname}${qs ? `?${qs}` : ''}${hash}`);
  }, []);
  const showFiles = useCallback(() => showTab('files'), [showTab]);
  useEffect(() => {
    const f = (e) => { if (TABS.includes(e.detail)) showTab(e.detail); };
    addEventListener(SHOW_TAB, f);
    return () => removeEventListener(SHOW_TAB, f);
  }, [showTab]);

  if (state.error && !d) {
    return html`<div class="page">
      <${ErrorNote} error=${state.error} what=${`change ${changeRef}`} />
      ${state.error instanceof ApiError && state.error.status === 404 ? null : html`<p><button type="button" class="btn" onClick=${state.reload}>Retry</button></p>`}
    </div>`;
  }
  if (!d) return html`<div class="page"><p class="loading" role="status">Loading change ${changeRef}…</p></div>`;
  const c = d.change;
  const retry = state.reload;
  const busy = state.loading;
  const part = (p, title, id, what, children) => html`<${Part} part=${p} title=${title} id=${id} what=${what} retry=${retry} busy=${busy}>${children}</${Part}>`;
  const patchsetCount = d.patchsets.data ? d.patchsets.data.length : c.patchset_count;
  const unresolved = threads.data?.unresolved;
  const mine = threads.drafts.length;
  const tabs = [
    // once the diff is read, its own files (the same count as its summary and its tree: a comparison or a whitespace mode changes it)
    { id: 'files', label: 'Files', count: threads.fileCount ?? (d.viewed ? (d.patchsets.data ?? []).find((p) => p.patchset_id === d.viewed)?.changed_file_stats?.files_changed : null) },
    { id: 'conversation', label: 'Conversation', count: threads.data ? threads.data.threads.length : null },
    { id: 'checks', label: 'Checks', badge: d.evidence?.ci.data ? (d.evidence.ci.data.overall ?? d.evidence.ci.data.availability) : null },
  ];
  const viewedPs = (d.patchsets.data ?? []).find((p) => p.patchset_id === d.viewed) ?? null;
  return html`<${ThreadsContext.Provider} value=${threads}><div class="page change-page">
    ${state.error ? html`<${PartError} error=${state.error} what=${`change ${changeRef} again`} retry=${retry} busy=${busy} />` : null}
    <div class="page-head change-head">
      <h1><span class="title-text">${c.title}</span> <${Badge} value=${c.status} />${c.wip ? html` <span class="badge tone-plain wip-badge" data-testid="wip" title="Work in progress: no reviewer is asked to act until it is ready">WIP</span>` : null}</h1>
      ${OPEN.includes(c.status) ? html`<div class="head-actions">
        <${Attention} change=${c} attention=${d.attention} me=${me} />
        ${access.may('comments.publish') ? html`<button type="button" class=${`btn small reply-btn ${mine ? 'primary' : ''}`} onClick=${() => setReplying(true)} title="Publish your drafts with a vote and a message, in one step">Reply…${mine ? html` <span class="count-pill">${mine}</span>` : null}</button>` : null}
        ${mine ? html`<span class="muted small">${plural(mine, 'draft')} not published</span>` : null}
        ${threads.canApply && threads.applicable.length ? html`<button type="button" class="btn small" onClick=${() => threads.ops.apply(threads.applicable)} title="Apply every suggestion of the unresolved threads on the current patchset as one new patchset">Apply suggestions (${threads.applicable.length})</button>` : null}
      </div>` : null}
      <p class="meta parts">
        <span><code>${c.change_ref}</code></span>
        <span>task ${d.task.data ? html`<a href=${ui.task(repo, c.task_id)}>${d.task.data.title}</a>` : html`<a class="id-link" href=${ui.task(repo, c.task_id)}><code>${c.task_id}</code></a>`}</span>
        <span>into <${LineLink} repo=${repo} name=${c.land_target_line ?? c.base_line} /></span>
        ${c.landed_at_s ? html`<span>landed <${Time} s=${c.landed_at_s} /></span>` : null}
        <span><a href="#patchsets">${plural(patchsetCount ?? 0, 'patchset')}</a></span>
        ${c.stack?.length ? html`<span><a class="stack-link" href="#stack" title="The stack this change stands in (a series of commits pushed for review)">${c.stack.findIndex((e) => e.this) + 1} of ${c.stack.length} in a stack</a></span>` : null}
        ${c.topic ? html`<span data-testid="topic">topic <a href=${`/ui/repos/${encodeURIComponent(String(repo))}/search?q=${encodeURIComponent(`topic:"${c.topic}"`)}`}>${c.topic}</a></span>` : null}
        ${c.cc?.length ? html`<span data-testid="cc" title="People copied on the change">cc ${c.cc.join(', ')}</span>` : null}
        ${unresolved !== undefined ? html`<span><a class=${`unresolved-count${unresolved ? ' warn-text' : ''}`} href="#threads" onClick=${(e) => {
          threads.setListFilter('unresolved');
          // already at #threads: no hashchange, so the tab is opened here
          if (location.hash === '#threads') {
            e.preventDefault();
            showTab('conversation');
            requestAnimationFrame(() => document.getElementById('threads')?.scrollIntoView());
          }
        }} title="List the unresolved comment threads of the change (n / p step through them)">${unresolved} unresolved</a></span>` : null}
      </p>
      <${SelectedNote} repo=${repo} d=${d} access=${access} onShown=${showFiles} onDone=${state.reload} />
      <${ThreadFlash} />
    </div>
    <${Readiness} repo=${repo} d=${d} retry=${retry} busy=${busy} />
    ${d.missing ? html`<p class="note-box missing-note" role="alert">This change has no patchset <code>${d.missing}</code>: the page shows ${d.viewed ? html`the selected patchset <code>${d.viewed}</code>` : 'no patchset'} instead.</p>` : null}
    <${Tabs} tabs=${tabs} tab=${tab} onTab=${showTab} />
    <div class="tab-panel" id="tab-files" role="tabpanel" aria-labelledby="tabbtn-files" hidden=${tab !== 'files'}>
      ${d.viewed ? html`<${DiffSection} key=${`${d.viewed}|${against}`} repo=${repo} d=${d} viewed=${d.viewed} against=${against} view=${view} setParams=${setParams} me=${me} active=${tab === 'files'} onShow=${showFiles} canMark=${access.may('viewed.put')} />` : html`<${Empty}>This change has no patchset yet.</${Empty}>`}
    </div>
    <div class="change-grid" hidden=${tab === 'files'}>
      <div class="col main-col">
        <div class="tab-panel" id="tab-conversation" role="tabpanel" aria-labelledby="tabbtn-conversation" hidden=${tab !== 'conversation'}>
          <${Description} repo=${repo} change=${c} task=${d.task} ps=${viewedPs} author=${viewedPs ? d.authors?.get(viewedPs.patchset_id) : null} />
          ${d.viewed ? html`<${ThreadList} /><${Conversation} />` : null}
          ${part(d.reviews, 'Reviews and comments', 'reviews', 'the reviews', (x) => html`<${Reviews} repo=${repo} reviews=${x} />`)}
          ${part(d.patchsets, 'Patchsets', 'patchsets', 'the patchsets', () => html`<${Patchsets} repo=${repo} d=${d} viewed=${d.viewed} />`)}
        </div>
        <div class="tab-panel" id="tab-checks" role="tabpanel" aria-labelledby="tabbtn-checks" hidden=${tab !== 'checks'}>
          <${JudgedNow} d=${d} />
          ${d.evidence ? html`
            ${part(d.evidence.policy, 'Policy', 'policy', 'the policy decision', (x) => html`<${Policy} policy=${x} />`)}
            ${part(d.evidence.ci, 'CI', 'ci', 'the CI status', (x) => html`<${Ci} repo=${repo} ci=${x} />`)}
            ${part(d.evidence.attestation, 'Attestation', 'attestation', 'the attestation', (x) => html`<${Attestation} a=${x} repo=${repo} d=${d} access=${access} onDone=${retry} />`)}` : html`<${Empty}>No patchset: nothing to check yet.</${Empty}>`}
        </div>
      </div>
      <div class="col side-col">
        <${Stack} repo=${repo} change=${c} />
        ${part(d.reviewers, 'Reviewers', 'people', 'the reviewers', (x) => html`<${Reviewers} repo=${repo} rows=${x} me=${me} />`)}
        <${Actions} repo=${repo} d=${d} access=${access} onDone=${state.reload} onReply=${access.may('comments.publish') ? () => setReplying(true) : null} drafts=${mine} />
        ${part(d.queue, 'Land queue', 'queue', 'the land queue', (q) => html`<${LandQueueCard} repo=${repo} change=${c} queue=${q} onDone=${state.reload} access=${access} />`)}
        <${LandHistory} repo=${repo} change=${c} version=${d} />
      </div>
    </div>
    ${replying ? html`<${ReplyDialog} onClose=${() => setReplying(false)} onDone=${state.reload} />` : null}
  </div></${ThreadsContext.Provider}>`;
}
