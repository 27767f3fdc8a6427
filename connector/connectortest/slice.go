package connectortest

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// sliceSource is the source of the sink tests: the values of a slice, cut
// on a first start into one contiguous split per reader, each read in
// order. It is written with the public SPI only, and passes RunSource.
type sliceSource[T any] struct {
	data []T
}

// newSliceSource returns the source of data; with mode non-zero, it
// declares that changelog mode.
func newSliceSource[T any](data []T, mode changelog.Mode) connector.Source[T] {
	s := &sliceSource[T]{data: data}
	if mode != 0 {
		return modeSlice[T]{s, mode}
	}
	return s
}

type modeSlice[T any] struct {
	*sliceSource[T]
	mode changelog.Mode
}

func (m modeSlice[T]) ChangelogMode() changelog.Mode { return m.mode }

// A split is "slice-<i>" with state (start, end, position) as varints.
func encodeRange(lo, hi, pos int64) []byte {
	b := binary.AppendVarint(nil, lo)
	b = binary.AppendVarint(b, hi)
	return binary.AppendVarint(b, pos)
}

func decodeRange(b []byte) (lo, hi, pos int64, err error) {
	var v [3]int64
	for i := range v {
		x, n := binary.Varint(b)
		if n <= 0 {
			return 0, 0, 0, errors.New("slice split state is corrupt")
		}
		v[i], b = x, b[n:]
	}
	return v[0], v[1], v[2], nil
}

func (s *sliceSource[T]) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(p int) ([]connector.Split, error) {
		out := make([]connector.Split, p)
		for i := range out {
			lo, hi := int64(len(s.data)*i/p), int64(len(s.data)*(i+1)/p)
			out[i] = connector.Split{ID: fmt.Sprintf("slice-%d", i), State: encodeRange(lo, hi, lo)}
		}
		return out, nil
	})
}

func (s *sliceSource[T]) NewReader(connector.ReaderContext) (connector.Reader[T], error) {
	return &sliceReader[T]{data: s.data}, nil
}

type sliceSplit struct {
	id          string
	lo, hi, pos int64
}

type sliceReader[T any] struct {
	data   []T
	splits []sliceSplit
}

func (r *sliceReader[T]) AddSplits(splits []connector.Split) error {
	for _, s := range splits {
		lo, hi, pos, err := decodeRange(s.State)
		if err != nil {
			return fmt.Errorf("split %s: %w", s.ID, err)
		}
		if hi > int64(len(r.data)) || lo > pos || pos > hi {
			return fmt.Errorf("split %s [%d,%d) at %d does not fit the %d records of the input", s.ID, lo, hi, pos, len(r.data))
		}
		r.splits = append(r.splits, sliceSplit{id: s.ID, lo: lo, hi: hi, pos: pos})
	}
	return nil
}

func (r *sliceReader[T]) Read(out connector.Output[T]) error {
	for len(r.splits) > 0 && out.Room() > 0 {
		sp := &r.splits[0]
		so := out.Split(sp.id)
		for sp.pos < sp.hi && out.Room() > 0 {
			so.Emit(r.data[sp.pos])
			sp.pos++
		}
		if sp.pos == sp.hi {
			so.Finish()
			r.splits = r.splits[1:]
		}
	}
	return nil
}

func (r *sliceReader[T]) SnapshotState(int64) ([]connector.Split, error) {
	out := make([]connector.Split, len(r.splits))
	for i, sp := range r.splits {
		out[i] = connector.Split{ID: sp.id, State: encodeRange(sp.lo, sp.hi, sp.pos)}
	}
	return out, nil
}

func (r *sliceReader[T]) Close() error { return nil }
