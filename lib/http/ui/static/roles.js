// The least role each operation the pages offer needs (the route table's `permission` column,
// lib/http/routes.ts), used only to say why a control is missing ("Landing needs the maintainer
// role"). Whether a control shows comes from the session's `may`; the UI test compares this
// table with the route table so it cannot drift.
export const OP_ROLE = {
  'comments.publish': 'contributor',
  'comments.create': 'contributor',
  'comments.resolve': 'contributor',
  'comments.applySuggestions': 'contributor',
  'changes.requestReview': 'contributor',
  'changes.selectPatchset': 'maintainer',
  'changes.rebase': 'contributor',
  'patchsets.runCi': 'contributor',
  'patchsets.evaluatePolicy': 'contributor',
  'attestations.put': 'contributor',
  'viewed.put': 'contributor',
  'tasks.land': 'maintainer',
  'landQueue.enqueue': 'maintainer',
  'landQueue.remove': 'maintainer',
  'gitMirrors.delete': 'maintainer',
  'gitMirrors.resume': 'maintainer',
  'access.change': 'admin',
};

export const ROLES = ['reader', 'contributor', 'maintainer', 'admin'];
