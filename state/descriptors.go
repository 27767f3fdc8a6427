package state

import (
	"fmt"

	"github.com/eddystream/eddy/agg"
	istate "github.com/eddystream/eddy/internal/state"
)

// ValueDescriptor declares a Value.
type ValueDescriptor[T any] struct {
	// Name identifies the state within the operator, in snapshots too.
	Name string
	// Codec encodes values; nil means DefaultCodec.
	Codec Codec[T]
	// TTL sets a time to live; the zero value means none.
	TTL TTLConfig
}

// ListDescriptor declares a List.
type ListDescriptor[T any] struct {
	// Name identifies the state within the operator, in snapshots too.
	Name string
	// Codec encodes elements; nil means DefaultCodec.
	Codec Codec[T]
	// TTL sets a time to live per element; the zero value means none.
	TTL TTLConfig
}

// MapDescriptor declares a Map.
type MapDescriptor[K comparable, V any] struct {
	// Name identifies the state within the operator, in snapshots too.
	Name string
	// KeyCodec encodes map keys; nil means DefaultCodec.
	KeyCodec Codec[K]
	// ValueCodec encodes map values; nil means DefaultCodec.
	ValueCodec Codec[V]
	// TTL sets a time to live per entry; the zero value means none.
	TTL TTLConfig
}

// ReducingDescriptor declares a Reducing.
type ReducingDescriptor[T any] struct {
	// Name identifies the state within the operator, in snapshots too.
	Name string
	// Reduce combines two values into one. It is required.
	Reduce func(a, b T) T
	// Codec encodes values; nil means DefaultCodec.
	Codec Codec[T]
	// TTL sets a time to live; the zero value means none.
	TTL TTLConfig
}

// AggregatingDescriptor declares an Aggregating.
type AggregatingDescriptor[IN, ACC, OUT any] struct {
	// Name identifies the state within the operator, in snapshots too.
	Name string
	// Function is the aggregate function. It is required.
	Function agg.Function[IN, ACC, OUT]
	// Codec encodes accumulators; nil means DefaultCodec.
	Codec Codec[ACC]
	// TTL sets a time to live; the zero value means none.
	TTL TTLConfig
}

// NewValue declares the Value described by d on s. It panics with an error
// if d is invalid or its name is declared with other types.
func NewValue[K comparable, T any](s Store[K], d ValueDescriptor[T]) Value[T] {
	h, err := istate.NewValueHandle[K, istate.VoidNamespace](internalStore(s), nil, nil, d.Name, d.Codec, d.TTL.internal())
	return must[Value[T]](h, err, "value", d.Name)
}

// NewList declares the List described by d on s. It panics with an error if
// d is invalid or its name is declared with other types.
func NewList[K comparable, T any](s Store[K], d ListDescriptor[T]) List[T] {
	h, err := istate.NewListHandle[K, istate.VoidNamespace](internalStore(s), nil, nil, d.Name, d.Codec, d.TTL.internal())
	return must[List[T]](h, err, "list", d.Name)
}

// NewMap declares the Map described by d on s. It panics with an error if d
// is invalid or its name is declared with other types.
func NewMap[K, UK comparable, UV any](s Store[K], d MapDescriptor[UK, UV]) Map[UK, UV] {
	h, err := istate.NewMapHandle[K, istate.VoidNamespace](internalStore(s), nil, nil, d.Name, d.KeyCodec, d.ValueCodec, d.TTL.internal())
	return must[Map[UK, UV]](h, err, "map", d.Name)
}

// NewReducing declares the Reducing described by d on s. It panics with an
// error if d is invalid or its name is declared with other types.
func NewReducing[K comparable, T any](s Store[K], d ReducingDescriptor[T]) Reducing[T] {
	h, err := istate.NewReducingHandle[K, istate.VoidNamespace](internalStore(s), nil, nil, d.Name, d.Codec, d.Reduce, d.TTL.internal())
	return must[Reducing[T]](h, err, "reducing", d.Name)
}

// NewAggregating declares the Aggregating described by d on s. It panics with
// an error if d is invalid or its name is declared with other types.
func NewAggregating[K comparable, IN, ACC, OUT any](s Store[K], d AggregatingDescriptor[IN, ACC, OUT]) Aggregating[IN, OUT] {
	h, err := istate.NewAggregatingHandle[K, istate.VoidNamespace](internalStore(s), nil, nil, d.Name, d.Function, d.Codec, d.TTL.internal())
	return must[Aggregating[IN, OUT]](h, err, "aggregating", d.Name)
}

// must returns h, or panics with an error naming the state if err is set.
func must[I any, H any](h H, err error, kind, name string) I {
	if err != nil {
		panic(fmt.Errorf("state: declaring %s state %q: %w", kind, name, err))
	}
	return any(h).(I)
}
