// Back and Forward return to where the reader was, also on a long diff. The browser's own
// restoration cannot do it here: it scrolls at popstate, before the page has read its data and
// built its diff, when the document is too short, and lands at the top. So the position is
// kept in each history entry's state (scrollY, and the diff file at the top of the screen with
// the offset into it, since file bodies are built lazily and change height) and put back once
// the page is tall enough, following it while the sections around it are built, until the
// reader scrolls or types.
const KEY = 'cairnScroll';
/** Sections a position is anchored to: their top moves when bodies above them are built. */
const ANCHORS = '.diff-file[id]';
const GIVE_UP_MS = 8000;
const STABLE_FRAMES = 20;

let restoring = 0;
let stopRestoring = () => {};
let saveTimer = 0;

function position() {
  const y = scrollY;
  let anchor = null;
  // at the top there is nothing to anchor to, and measuring would lay out a long diff for nothing
  if (y <= 0) return { y, anchor };
  for (const el of document.querySelectorAll(ANCHORS)) {
    const r = el.getBoundingClientRect();
    if (r.top <= 1 && r.bottom > 1) {
      anchor = { id: el.id, offset: -r.top };
      break;
    }
    if (r.top > 1) break;
  }
  return { y, anchor };
}

/** Records the scroll position in the current history entry (called before leaving it). */
export function saveScroll() {
  clearTimeout(saveTimer);
  if (restoring) return;
  try {
    history.replaceState({ ...(history.state ?? {}), [KEY]: position() }, '');
  } catch {
    // a state the browser refuses to store: nothing to restore later
  }
}

function target(saved) {
  if (saved.anchor) {
    const el = document.getElementById(saved.anchor.id);
    if (el && el.matches(ANCHORS)) return Math.round(el.getBoundingClientRect().top + scrollY + saved.anchor.offset);
  }
  return saved.y;
}

function restore(saved) {
  stopRestoring();
  if (!saved || typeof saved.y !== 'number' || saved.y <= 0) {
    scrollTo(0, 0);
    return;
  }
  const started = performance.now();
  let stable = 0;
  let lastHeight = -1;
  const onInput = () => stopRestoring();
  const inputs = ['wheel', 'touchstart', 'keydown', 'pointerdown'];
  stopRestoring = () => {
    cancelAnimationFrame(restoring);
    restoring = 0;
    for (const t of inputs) removeEventListener(t, onInput, true);
    stopRestoring = () => {};
  };
  for (const t of inputs) addEventListener(t, onInput, { capture: true, passive: true });
  const tick = () => {
    const height = document.documentElement.scrollHeight;
    const to = target(saved);
    if (height - innerHeight >= to - 1) {
      if (Math.abs(scrollY - to) > 1) {
        scrollTo(0, to);
        stable = 0;
      } else if (height === lastHeight) stable += 1;
      else stable = 0;
    }
    lastHeight = height;
    if (stable >= STABLE_FRAMES || performance.now() - started > GIVE_UP_MS) {
      stopRestoring();
      return;
    }
    restoring = requestAnimationFrame(tick);
  };
  restoring = requestAnimationFrame(tick);
}

/** Takes over scroll restoration: saves on scroll and before leaving, restores on Back/Forward and on load. */
export function installScrollMemory() {
  if ('scrollRestoration' in history) history.scrollRestoration = 'manual';
  addEventListener('scroll', () => {
    clearTimeout(saveTimer);
    saveTimer = setTimeout(saveScroll, 150);
  }, { passive: true });
  addEventListener('pagehide', saveScroll);
  addEventListener('popstate', (e) => restore(e.state?.[KEY]));
  const saved = history.state?.[KEY];
  if (saved) restore(saved);
}
