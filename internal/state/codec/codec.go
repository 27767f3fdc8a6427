// Package codec is the encoding of keyed state: the Codec interface, the
// default codecs built by reflection for any type without interfaces,
// channels or functions (Default), the codecs of lists (List) and of JSON
// (JSON), and helpers the tables, timers and snapshots of the state backends
// share. It depends on no other package of eddy.
package codec

// Codec encodes and decodes values of type T for snapshots and for backends
// that store bytes. Encodings must be deterministic: equal values encode to
// equal bytes, because encoded keys are compared. They must also be
// self-delimiting (no encoding is a prefix of another), because keys,
// namespaces and user keys are concatenated and scanned by prefix. Codecs of
// keys should encode in an order that agrees with the natural order of the
// values, so that byte-ordered backends keep keys sorted.
//
// A decoded value must not share memory with src. Codecs are immutable and
// safe for concurrent use: checkpoints encode on other goroutines.
type Codec[T any] interface {
	// Append appends the encoding of v to dst and returns the extended slice.
	Append(dst []byte, v T) []byte
	// Decode decodes one value from the start of src and returns it with the
	// number of bytes it used.
	Decode(src []byte) (v T, n int, err error)
}
