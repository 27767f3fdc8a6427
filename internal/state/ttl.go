package state

import (
	"fmt"
	"time"

	"github.com/eddystream/eddy/internal/state/codec"
)

// TTLConfig sets a time to live on state, as Flink's StateTtlConfig does, in
// processing time. The zero value means no TTL. Entries of lists and maps
// expire one by one; a value, reducing or aggregating state expires as a
// whole.
//
// An expired entry is invisible (unless Visibility says otherwise) and is
// deleted when it is next accessed, or by Store.CleanupExpired, which the
// runtime calls periodically.
type TTLConfig struct {
	// TTL is how long an entry lives after its last update (or access, with
	// OnReadAndWrite). Zero disables TTL; otherwise it must be at least a
	// millisecond, the resolution of the clock.
	TTL time.Duration
	// Update says which accesses restart an entry's time to live.
	Update TTLUpdate
	// Visibility says whether an expired entry that is still stored may be
	// returned.
	Visibility TTLVisibility
}

// Enabled reports whether c sets a time to live.
func (c TTLConfig) Enabled() bool { return c.TTL != 0 }

// Validate returns an error if c is not a valid configuration.
func (c TTLConfig) Validate() error {
	if c.TTL < 0 || (c.TTL > 0 && c.TTL < time.Millisecond) {
		return fmt.Errorf("state: TTL %v is invalid: use 0 for none or at least 1ms", c.TTL)
	}
	if c.Update > OnReadAndWrite {
		return fmt.Errorf("state: TTL update type %d is invalid", c.Update)
	}
	if c.Visibility > ReturnExpiredIfNotCleanedUp {
		return fmt.Errorf("state: TTL visibility %d is invalid", c.Visibility)
	}
	return nil
}

// TTLUpdate says which accesses restart an entry's time to live.
type TTLUpdate uint8

const (
	// OnCreateAndWrite restarts the time to live when the entry is written.
	// It is the default.
	OnCreateAndWrite TTLUpdate = iota
	// OnReadAndWrite restarts the time to live when the entry is read or
	// written.
	OnReadAndWrite
)

// String names the update type.
func (u TTLUpdate) String() string {
	switch u {
	case OnCreateAndWrite:
		return "OnCreateAndWrite"
	case OnReadAndWrite:
		return "OnReadAndWrite"
	}
	return fmt.Sprintf("TTLUpdate(%d)", uint8(u))
}

// TTLVisibility says whether an expired entry that is still stored may be
// returned.
type TTLVisibility uint8

const (
	// NeverReturnExpired hides expired entries. It is the default.
	NeverReturnExpired TTLVisibility = iota
	// ReturnExpiredIfNotCleanedUp returns an expired entry once if it has not
	// been deleted yet; the access deletes it.
	ReturnExpiredIfNotCleanedUp
)

// String names the visibility.
func (v TTLVisibility) String() string {
	switch v {
	case NeverReturnExpired:
		return "NeverReturnExpired"
	case ReturnExpiredIfNotCleanedUp:
		return "ReturnExpiredIfNotCleanedUp"
	}
	return fmt.Sprintf("TTLVisibility(%d)", uint8(v))
}

// Timed is how state with a TTL is stored: the value and the processing time
// (ms) of its last access that counts for its time to live.
type Timed[T any] struct {
	Value T
	Stamp int64
}

// TimedCodec returns the codec of Timed[T]: the stamp as a fixed eight-byte
// integer, then the value.
func TimedCodec[T any](vc codec.Codec[T]) codec.Codec[Timed[T]] { return timedCodec[T]{vc} }

type timedCodec[T any] struct{ vc codec.Codec[T] }

func (c timedCodec[T]) Append(dst []byte, v Timed[T]) []byte {
	dst = codec.AppendInt64(dst, v.Stamp)
	return c.vc.Append(dst, v.Value)
}

func (c timedCodec[T]) Decode(src []byte) (v Timed[T], n int, err error) {
	if len(src) < 8 {
		return v, 0, codec.Truncated("TTL stamp")
	}
	v.Stamp = codec.ReadInt64(src)
	v.Value, n, err = c.vc.Decode(src[8:])
	return v, n + 8, err
}

// ttlPolicy is a validated TTLConfig in the clock's unit.
type ttlPolicy struct {
	ms         int64
	onRead     bool
	showExpiry bool
}

func newTTLPolicy(c TTLConfig) (ttlPolicy, error) {
	if err := c.Validate(); err != nil {
		return ttlPolicy{}, err
	}
	return ttlPolicy{
		ms:         c.TTL.Milliseconds(),
		onRead:     c.Update == OnReadAndWrite,
		showExpiry: c.Visibility == ReturnExpiredIfNotCleanedUp,
	}, nil
}

// expired reports whether an entry last stamped at stamp has expired at now,
// as Flink decides it: stamp + ttl <= now.
func (p ttlPolicy) expired(stamp, now int64) bool { return stamp+p.ms <= now }
