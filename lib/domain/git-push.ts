// Push for review (docs/git.md "Push for review"): the ref a push names (`refs/for/<line>`, with
// Gerrit's `%option,option` after it), the `Change-Id:` trailer of a commit message, and the task
// and change a pushed commit is written under. Pure functions.
import { nameProblem } from './text.js';
import { parseChangeRef, parseTaskRef } from './workflow/rules.js';

/** The workflow.log entity that finds a change by the Change-Id trailer of its pushed commits (id: `<line> <Change-Id>`). */
export const GIT_CHANGE_KEY = 'git_change_key';

export interface GitChangeKeyRecord {
  line: string;
  change_key: string;
  change_id: string;
}

export const changeKeyId = (line: string, key: string): string => `${line} ${key}`;

/** What `refs/for/<line>%task=…,change=…` asks for. */
export interface ReviewTarget {
  line: string;
  /** `%task=task-3`: the new change goes under this task. */
  task_id: string | null;
  /** `%change=change-3`: a new patchset of this change. */
  change_id: string | null;
}

/** Why a push to `ref` cannot be a push for review (a message git prints beside the ref), or the target. */
export function reviewTarget(ref: string): ReviewTarget | { refused: string } {
  const m = /^refs\/for\/(.*)$/.exec(ref);
  if (!m) return { refused: '' };
  const [line, options] = splitOnce(m[1], '%');
  if (line === '') return { refused: 'refs/for/ must name a line: refs/for/main' };
  const target: ReviewTarget = { line, task_id: null, change_id: null };
  if (options === null) return target;
  // Each option once, as git and Gerrit refuse conflicting options: a second %task= is refused,
  // never silently the one that wins.
  const seen = new Set<string>();
  let changeValue: string | null = null;
  for (const option of options.split(',')) {
    const [key, value] = splitOnce(option, '=');
    if ((key === 'task' || key === 'change') && value !== null) {
      if (seen.has(key)) return { refused: `%${key}= may be given once: refs/for/${line} takes one %task=task-N and one %change=change-N` };
      seen.add(key);
    }
    if (key === 'task' && value !== null) {
      const id = parseTaskRef(value);
      if (id === null) return { refused: `%task=${value} does not name a task (task-3)` };
      // A %change= before it that named its task: the two must agree.
      if (target.task_id !== null && target.task_id !== id) return { refused: `%change=${changeValue} is not a change of ${id}` };
      target.task_id = id;
    } else if (key === 'change' && value !== null) {
      const parsed = parseChangeRef(value);
      if (parsed === null) return { refused: `%change=${value} does not name a change (change-3)` };
      if (parsed.task_id !== null) {
        if (target.task_id !== null && target.task_id !== parsed.task_id) return { refused: `%change=${value} is not a change of ${target.task_id}` };
        target.task_id = parsed.task_id;
      }
      target.change_id = parsed.change_id;
      changeValue = value;
    } else {
      return { refused: `unknown push option %${option.slice(0, 80)}: refs/for/${line} takes %task=task-N and %change=change-N` };
    }
  }
  return target;
}

/** What a push's options (`git push -o OPTION`) ask of every ref it pushes for review. */
export interface PushAsk {
  /** The new patchset becomes the change's selected one (false: `-o noselect`). */
  select: boolean;
  /** `-o r=NAME`: review requested from these people (in order, each once). */
  reviewers: string[];
  /** `-o m=MESSAGE`: the patchset's summary instead of the commit message. */
  message: string | null;
  /** `-o topic=NAME`: the change's topic (null: left as it is). */
  topic: string | null;
  /** `-o wip` (true) or `-o ready` (false); null: left as it is. */
  wip: boolean | null;
  /** `-o cc=NAME`: people copied on the change (in order, each once). */
  cc: string[];
}

/** The options a push for review takes, as the refusal of an unknown one lists them. */
export const KNOWN_PUSH_OPTIONS = 'noselect, r=NAME, m=MESSAGE, topic=NAME, wip, ready, cc=NAME';
/** People one push may ask for review (a review request's own cap). */
export const MAX_PUSH_REVIEWERS = 50;

/**
 * What a push's options (`git push -o OPTION`, sent after its commands) ask: `noselect` keeps
 * each change's selected patchset, `r=NAME` requests a review, `m=MESSAGE` is the patchset's
 * summary, `topic=NAME` sets the change's topic, `wip` / `ready` mark it work in progress or
 * ready, `cc=NAME` copies a person. Any other option, and a bad value, is refused (every ref),
 * rather than ignored.
 */
export function pushOptions(options: readonly string[], maxMessage: number): PushAsk | { refused: string } {
  const ask: PushAsk = { select: true, reviewers: [], message: null, topic: null, wip: null, cc: [] };
  for (const option of options) {
    const [key, value] = splitOnce(option, '=');
    if (option === 'noselect') ask.select = false;
    else if (option === 'wip' || option === 'ready') {
      const wip = option === 'wip';
      if (ask.wip !== null && ask.wip !== wip) return { refused: '-o wip and -o ready contradict each other: give one' };
      ask.wip = wip;
    } else if (key === 'topic' && value !== null) {
      if (ask.topic !== null && ask.topic !== value) return { refused: '-o topic= may be given once' };
      const problem = nameProblem(value);
      if (problem !== null) return { refused: `-o topic=${value.slice(0, 80)}: a topic ${problem}` };
      ask.topic = value;
    } else if (key === 'cc' && value !== null) {
      const problem = nameProblem(value);
      if (problem !== null) return { refused: `-o cc=${value.slice(0, 80)}: a name ${problem}` };
      if (!ask.cc.includes(value)) ask.cc.push(value);
      if (ask.cc.length > MAX_PUSH_REVIEWERS) return { refused: `-o cc= names more than ${MAX_PUSH_REVIEWERS} people` };
    }
    else if (key === 'r' && value !== null) {
      const problem = nameProblem(value);
      if (problem !== null) return { refused: `-o r=${value.slice(0, 80)}: a reviewer's name ${problem}` };
      if (!ask.reviewers.includes(value)) ask.reviewers.push(value);
      if (ask.reviewers.length > MAX_PUSH_REVIEWERS) return { refused: `-o r= names more than ${MAX_PUSH_REVIEWERS} people` };
    } else if (key === 'm' && value !== null) {
      if (ask.message !== null) return { refused: '-o m= may be given once' };
      if (value.trim() === '') return { refused: '-o m= must not be empty' };
      if (value.length > maxMessage) return { refused: `-o m= is longer than ${maxMessage} characters` };
      ask.message = value;
    } else return { refused: `unknown push option -o ${option.slice(0, 80)}: a push for review takes -o ${KNOWN_PUSH_OPTIONS}` };
  }
  return ask;
}

function splitOnce(text: string, sep: string): [string, string | null] {
  const at = text.indexOf(sep);
  return at < 0 ? [text, null] : [text.slice(0, at), text.slice(at + 1)];
}

/** The `Change-Id: I<40 hex>` trailer of a message's last paragraph (Gerrit's), or null. */
export function changeIdTrailer(message: string): string | null {
  const paragraphs = message.replace(/\s+$/, '').split(/\n[ \t]*\n/);
  if (paragraphs.length < 2) return null;
  const last = paragraphs[paragraphs.length - 1];
  let found: string | null = null;
  for (const line of last.split('\n')) {
    const m = /^Change-Id:\s*(I[0-9a-f]{40})\s*$/.exec(line);
    if (m) found = m[1];
  }
  return found;
}

/** A commit message as a task or change: its subject (first paragraph, one line) and the rest. */
export function titleAndBody(message: string, maxTitle: number): { title: string; body: string } {
  const text = message.replace(/\r\n/g, '\n').trim();
  const cut = text.search(/\n[ \t]*\n/);
  const subject = (cut < 0 ? text : text.slice(0, cut)).replace(/\s*\n\s*/g, ' ').trim();
  const body = cut < 0 ? '' : text.slice(cut).trim();
  return { title: subject.slice(0, maxTitle), body };
}
