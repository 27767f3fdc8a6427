package state

import "github.com/eddystream/eddy/internal/state/codec"

// Codec is codec.Codec.
//
// Deprecated: use codec.Codec.
type Codec[T any] = codec.Codec[T]
