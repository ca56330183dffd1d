#!/bin/sh
# Refresh the API reference renderer's files from the swagger-ui-dist package of the npm
# registry: `sh vendor/swagger-ui/update.sh 5.35.0`. `npm pack` only downloads the tarball, so
# no install script of the package or of its dependency (the @scarf/scarf analytics hook) runs;
# cairn serves these files itself (lib/cli/docs-assets.ts) and has no dependency on the package.
set -eu
version="${1:?usage: update.sh VERSION (of swagger-ui-dist)}"
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "swagger-ui-dist@$version" >/dev/null && tar -xzf swagger-ui-dist-*.tgz)
for f in LICENSE NOTICE swagger-ui.css swagger-ui-bundle.js swagger-ui-bundle.js.LICENSE.txt favicon-32x32.png; do
  cp "$tmp/package/$f" "$here/$f"
done
printf '%s\n' "$version" > "$here/VERSION"
