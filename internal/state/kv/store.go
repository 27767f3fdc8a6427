package kv

import "fmt"

// Store is an ordered byte store: the storage of a bytes backend
// (state.BytesBackend embeds it) as the tables, cache and timers of this
// package use it. Keys passed to it are built by them as
// keyGroup(2 bytes) | table id | key | namespace [| user key] (see the key
// layout in tables.go). Failures panic with a *BackendError.
type Store interface {
	// Get returns the value stored under key, or ok=false. The returned slice
	// is valid until the next call on the backend.
	Get(key []byte) (value []byte, ok bool)
	// Set stores value under key. The backend does not retain key or value
	// after the call.
	Set(key, value []byte)
	// Delete removes key.
	Delete(key []byte)
	// DeletePrefix removes every key that starts with prefix.
	DeletePrefix(prefix []byte)
	// Scan calls fn for each key starting with prefix, in key order, until fn
	// returns false. The slices are valid only during the call. fn may Get
	// any key and Set or Delete the key it is given; the caller does not
	// modify prefix until Scan returns.
	Scan(prefix []byte, fn func(key, value []byte) bool)
}

// BackendError is the panic value a backend raises when its storage fails,
// and the tables of this package when stored bytes do not decode. The
// runtime recovers it and fails the job with Err.
type BackendError struct {
	Op  string
	Err error
}

// Error describes the failed backend operation.
func (e *BackendError) Error() string { return fmt.Sprintf("state: %s: %v", e.Op, e.Err) }

// Unwrap returns the underlying storage error.
func (e *BackendError) Unwrap() error { return e.Err }
