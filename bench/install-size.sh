#!/bin/sh
# The production install's size: a commit's tree (default HEAD) without test/, bench/ and docs/, copied to a temp
# folder, installed there as documented, and measured: disk use (du -sk, KiB), the same as file sizes added up
# (--apparent-size), and the installed packages. Nothing is installed in this checkout.
#   bench/install-size.sh [commit] [install command]
#   bench/install-size.sh HEAD 'npm ci && npm prune --omit=dev'          (0.2.0 and later)
#   bench/install-size.sh ba40265 'npm ci --omit=dev'                     (0.1.0: the install then)
# better-sqlite3 comes from npm's prebuilt binary where one exists (prebuild-install); to measure with this
# checkout's own build instead, set npm_config_better_sqlite3_local_prebuilds to a folder holding its tarball.
set -eu
rev=${1:-HEAD}
install=${2:-npm ci && npm prune --omit=dev}
dir=$(mktemp -d)
git archive "$rev" | tar -x -C "$dir"
rm -rf "$dir/test" "$dir/bench" "$dir/docs"
(cd "$dir" && npm_config_prefer_offline=true npm_config_audit=false npm_config_fund=false sh -c "$install" >/dev/null)
cd "$dir"
echo "commit $(git -C "$OLDPWD" rev-parse --short=12 "$rev"), install: $install"
echo "tree on disk: $(du -sk . | cut -f1) KiB; file sizes: $(du -sk --apparent-size . | cut -f1) KiB"
echo "node_modules: $(du -sk node_modules | cut -f1) KiB; dist: $(du -sk dist | cut -f1) KiB"
echo "packages: $(npm ls --all --parseable 2>/dev/null | tail -n +2 | wc -l)"
rm -rf "$dir"
