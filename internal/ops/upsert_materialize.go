package ops

import (
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// UpsertMaterializeLogic configures an UpsertMaterialize.
type UpsertMaterializeLogic[T any] struct {
	// Equal compares two rows, to find the row a retraction takes back.
	Equal func(a, b T) bool
	// TTL, if positive, drops the rows of a sink key not updated for that
	// long.
	TTL time.Duration
}

// UpsertMaterialize turns a retract changelog whose rows are keyed by a sink
// key other than the stream's own key into an upsert changelog on the sink
// key, as Flink's SinkUpsertMaterializer does: several rows of the input
// table may map to one sink key, and the sink must hold the latest of them
// that is still in the table.
//
// Its state is the list of the rows of each sink key in the order they
// arrived. An addition appends its row and emits it (+I if the key had no
// row, +U otherwise). A retraction removes the first equal row; if that was
// the last row of the list, it emits the row now last (+U), or -D of the
// retracted row if the list is empty; otherwise the sink's row does not
// change and nothing is emitted. An update whose -U and +U reach it together
// and share the sink key replaces the old row by the new one and emits only
// the +U, so that the sink never sees the key deleted in between. A
// retraction of a row the key does not hold is counted
// (RetractionsWithoutState). No -U is ever emitted.
type UpsertMaterialize[K comparable, T any] struct {
	*relational[K, changelog.Change[T], T]
	equal func(a, b T) bool
	rows  *state.ValueHandle[K, state.VoidNamespace, []T]
}

// NewUpsertMaterialize returns the operator, keyed by the sink key; it
// restores ctx.Restored.
func NewUpsertMaterialize[K comparable, T any](ctx *runtime.Context, spec KeySpec[K, changelog.Change[T]], newBackend BackendFactory, logic UpsertMaterializeLogic[T], outs map[string]any) (*UpsertMaterialize[K, T], error) {
	rel, err := newRelational[K, changelog.Change[T], T](ctx, spec, newBackend, logic.TTL, outs)
	if err != nil {
		return nil, err
	}
	m := &UpsertMaterialize[K, T]{relational: rel, equal: logic.Equal}
	if m.rows, err = state.NewValueHandle[K, state.VoidNamespace, []T](rel.store, nil, nil, "upsert-rows", nil, rel.ttlConfig()); err != nil {
		rel.Close()
		return nil, err
	}
	if err := rel.restore(ctx.Restored); err != nil {
		rel.Close()
		return nil, err
	}
	return m, nil
}

// ProcessBatch applies every change to the rows of its sink key.
func (m *UpsertMaterialize[K, T]) ProcessBatch(b *runtime.Batch[changelog.Change[T]]) error {
	for i := 0; i < len(b.Data); i++ {
		c := b.Data[i]
		m.setKeyOf(c)
		m.ts = b.TS[i]
		if c.Kind == changelog.UpdateBefore && i+1 < len(b.Data) && b.Data[i+1].Kind == changelog.UpdateAfter &&
			m.spec.Key(b.Data[i+1]) == m.kc.Key {
			i++
			m.ts = b.TS[i]
			m.replace(c.Row, b.Data[i].Row)
			continue
		}
		if c.Kind.IsAddition() {
			m.add(c.Row)
		} else {
			m.retract(c.Row)
		}
	}
	m.cleanup(b.Len())
	return m.flush()
}

// index returns the position of the first row of rows equal to row, or -1.
func (m *UpsertMaterialize[K, T]) index(rows []T, row T) int {
	for i, v := range rows {
		if m.equal(v, row) {
			return i
		}
	}
	return -1
}

func (m *UpsertMaterialize[K, T]) add(row T) {
	rows, _ := m.rows.Value()
	kind := changelog.UpdateAfter
	if len(rows) == 0 {
		kind = changelog.Insert
	}
	m.rows.Update(append(rows, row))
	m.emit(kind, row)
}

func (m *UpsertMaterialize[K, T]) retract(row T) {
	rows, _ := m.rows.Value()
	i := m.index(rows, row)
	if i < 0 {
		m.retractedAbsent()
		return
	}
	last := i == len(rows)-1
	rows = append(rows[:i], rows[i+1:]...)
	switch {
	case len(rows) == 0:
		m.rows.Clear()
		m.emit(changelog.Delete, row)
	case last:
		m.rows.Update(rows)
		m.emit(changelog.UpdateAfter, rows[len(rows)-1])
	default:
		m.rows.Update(rows)
	}
}

// replace applies an update of the current sink key from old to row.
func (m *UpsertMaterialize[K, T]) replace(old, row T) {
	rows, _ := m.rows.Value()
	i := m.index(rows, old)
	if i < 0 {
		m.retractedAbsent()
		m.add(row)
		return
	}
	wasLast := i == len(rows)-1
	rows = append(append(rows[:i], rows[i+1:]...), row)
	m.rows.Update(rows)
	if wasLast && m.equal(old, row) {
		return
	}
	m.emit(changelog.UpdateAfter, row)
}

// UpsertFilter prepares a retract changelog already keyed by a sink key for
// a sink that applies upserts by that key: it drops the -U of every update
// whose +U follows it with the same key (the +U replaces the row), and
// turns any other -U (an update that moves its row to another key, or a -U
// alone) into a -D. It is stateless; a -U that ends a batch waits for the
// next, since the two halves of an update are never split by a barrier.
type UpsertFilter[K comparable, T any] struct {
	key     func(T) K
	out     *Emitter[changelog.Change[T]]
	pending bool
	before  changelog.Change[T]
	beforeT int64
}

// NewUpsertFilter returns the filter writing to out.
func NewUpsertFilter[K comparable, T any](key func(T) K, out runtime.Input[changelog.Change[T]]) *UpsertFilter[K, T] {
	return &UpsertFilter[K, T]{key: key, out: NewEmitter(out)}
}

// ProcessBatch filters the batch.
func (f *UpsertFilter[K, T]) ProcessBatch(b *runtime.Batch[changelog.Change[T]]) error {
	for i, c := range b.Data {
		if f.pending {
			f.pending = false
			if c.Kind != changelog.UpdateAfter || f.key(c.Row) != f.key(f.before.Row) {
				f.out.Emit(changelog.Of(changelog.Delete, f.before.Row), f.beforeT)
			}
		}
		if c.Kind == changelog.UpdateBefore {
			f.pending, f.before, f.beforeT = true, c, b.TS[i]
			continue
		}
		f.out.Emit(c, b.TS[i])
	}
	return f.out.Flush()
}

// release emits a -U still waiting for its +U as a -D.
func (f *UpsertFilter[K, T]) release() error {
	if f.pending {
		f.pending = false
		f.out.Emit(changelog.Of(changelog.Delete, f.before.Row), f.beforeT)
	}
	return f.out.Flush()
}

// ProcessWatermark forwards the watermark.
func (f *UpsertFilter[K, T]) ProcessWatermark(wm int64) error {
	if err := f.release(); err != nil {
		return err
	}
	return f.out.Out().ProcessWatermark(wm)
}

// EndInput ends the output.
func (f *UpsertFilter[K, T]) EndInput() error {
	if err := f.release(); err != nil {
		return err
	}
	return f.out.Out().EndInput()
}

// SnapshotState releases a waiting -U, which no +U can follow across a
// barrier; the filter keeps no state.
func (f *UpsertFilter[K, T]) SnapshotState(int64) (*runtime.OperatorSnapshot, error) {
	return nil, f.release()
}
