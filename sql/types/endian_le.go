//go:build 386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm

package types

import "unsafe"

// nativeLE says the machine is little-endian: the slots and bitmap words
// of a row are its native uint64s.
const nativeLE = true

// load64 reads the little-endian uint64 at p.
func load64(p unsafe.Pointer) uint64 { return *(*uint64)(p) }
