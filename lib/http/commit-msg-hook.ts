// The commit-msg hook a push for review wants (docs/git.md "Push for review"), served at
// COMMIT_MSG_HOOK_PATH as Gerrit serves its own: it gives a commit message that has no
// `Change-Id: I<40 hex>` trailer one, so an amended commit keeps it and its push updates the
// change. POSIX sh; the trailer is written by `git interpret-trailers`, as Gerrit's hook does.

export const COMMIT_MSG_HOOK_PATH = '/tools/hooks/commit-msg';

/** The line that installs the hook in the current repository (what a push without a Change-Id prints). */
export const installHookLine = (base: string): string => `f="$(git rev-parse --git-path hooks/commit-msg)"; curl -fsSo "$f" ${base}${COMMIT_MSG_HOOK_PATH} && chmod +x "$f"`;

export const COMMIT_MSG_HOOK = `#!/bin/sh
# cairn commit-msg hook: adds a "Change-Id: I<40 hex>" trailer to a commit message that has none,
# so that \`git commit --amend\` keeps it and a push to refs/for/<line> updates the same change.
# Install:  curl -o .git/hooks/commit-msg http://HOST${COMMIT_MSG_HOOK_PATH} && chmod +x .git/hooks/commit-msg
# Turn off for one repository: git config cairn.createChangeId false
set -e
msg="$1"
if test "$(git config --bool cairn.createChangeId 2>/dev/null || true)" = false; then exit 0; fi
# A message of comments only is git's to refuse.
if ! git stripspace --strip-comments < "$msg" | grep -q .; then exit 0; fi
# A message that has one (an amend) keeps it.
if git interpret-trailers --parse < "$msg" | grep -q '^Change-Id: I[0-9a-f]\\{40\\}$'; then exit 0; fi
id=$({ git var GIT_COMMITTER_IDENT 2>/dev/null; git var GIT_AUTHOR_IDENT 2>/dev/null; cat "$msg"; date; echo "$$"; } | git hash-object --stdin | cut -c1-40)
tmp="$msg.change-id.$$"
trap 'rm -f "$tmp"' EXIT
git interpret-trailers --where end --if-exists doNothing --trailer "Change-Id: I$id" < "$msg" > "$tmp"
mv "$tmp" "$msg"
`;
