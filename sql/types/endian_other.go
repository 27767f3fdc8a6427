//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package types

import (
	"encoding/binary"
	"unsafe"
)

// nativeLE says the machine is little-endian.
const nativeLE = false

// load64 reads the little-endian uint64 at p.
func load64(p unsafe.Pointer) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(p), 8))
}
