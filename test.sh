#!/usr/bin/env bash
# Runs eddy's tests: vet, formatting, the whole suite, and the runtime,
# operator and API packages again under the race detector.
set -euo pipefail
cd "$(dirname "$0")"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed on:"; echo "$unformatted"; exit 1
fi
go vet ./...
go test -count=1 ./...
go test -count=1 -race . ./internal/runtime/... ./internal/ops/... ./internal/state/ ./internal/state/heap/ ./internal/checkpoint/
