#!/usr/bin/env bash
# Runs eddy's tests: vet, formatting, the static build of the CLI, the whole
# suite, and the runtime, operator and API packages again under the race
# detector.
set -euo pipefail
cd "$(dirname "$0")"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed on:"; echo "$unformatted"; exit 1
fi
go vet ./...

# The default build of the CLI is a static binary: pure Go, no cgo, no
# dynamic libraries, so it runs on any Linux of its architecture.
bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
CGO_ENABLED=0 go build -o "$bindir/eddy" ./cmd/eddy
if ! go version -m "$bindir/eddy" | grep -q 'CGO_ENABLED=0'; then
  echo "eddy was not built with CGO_ENABLED=0:"; go version -m "$bindir/eddy"; exit 1
fi
if command -v file >/dev/null && ! file "$bindir/eddy" | grep -q 'statically linked'; then
  echo "eddy is not statically linked:"; file "$bindir/eddy"; exit 1
fi
go test -count=1 ./...
go test -count=1 -race . ./internal/runtime/... ./internal/ops/... ./internal/state/ ./internal/state/heap/ ./internal/checkpoint/
