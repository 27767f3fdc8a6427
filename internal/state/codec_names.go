package state

import "github.com/eddystream/eddy/internal/state/codec"

// Codec is codec.Codec.
//
// Deprecated: use codec.Codec.
type Codec[T any] = codec.Codec[T]

// DefaultCodec returns codec.Default[T]().
//
// Deprecated: use codec.Default.
func DefaultCodec[T any]() (codec.Codec[T], error) { return codec.Default[T]() }
