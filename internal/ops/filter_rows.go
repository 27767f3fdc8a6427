package ops

import (
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
)

// FilterRows keeps the changes of a changelog whose rows a predicate
// accepts, as a WHERE clause does, and keeps the changelog well formed:
//
//   - an update (a -U and the +U after it, always in one batch) whose old
//     row passes and new row does not becomes a deletion (-D) of the old
//     row; one whose new row passes alone becomes an insertion (+I);
//   - on an upsert stream (no -U), where a +U replaces the row of its key,
//     a +U whose row does not pass becomes a deletion of the key (-D), and
//     a -D always passes, since it may carry the key alone.
//
// A -U that ends a batch has no +U (see runtime.UpdateBeforeOf): it is a
// retraction, and passes as a -D if its row does.
type FilterRows[T any] struct {
	forward[changelog.Change[T]]
	// Forwards says that pred keeps nothing of the rows it is given: the
	// filter then keeps nothing but the changes it forwards.
	Forwards bool
	pred     func(T) bool
	upsert   bool
	buf      *runtime.Batch[changelog.Change[T]]
}

// NewFilterRows returns the filter of a changelog of mode in, writing to
// out.
func NewFilterRows[T any](pred func(T) bool, in changelog.Mode, out runtime.Input[changelog.Change[T]]) *FilterRows[T] {
	return &FilterRows[T]{forward: forward[changelog.Change[T]]{out}, pred: pred,
		upsert: in.Contains(changelog.UpdateAfter) && !in.Contains(changelog.UpdateBefore),
		buf:    runtime.NewBatch[changelog.Change[T]](0)}
}

// ForwardsInputOnly implements runtime.InputForwarder: with Forwards, the
// filter keeps nothing of its input but the changes it forwards.
func (f *FilterRows[T]) ForwardsInputOnly() bool { return f.Forwards }

// FilterRowsMode returns the changelog mode of the output of FilterRows
// over a stream of mode in: updates may become deletions and insertions.
func FilterRowsMode(in changelog.Mode) changelog.Mode {
	out := in
	if in.Contains(changelog.UpdateBefore) || in.Contains(changelog.UpdateAfter) {
		out |= changelog.ModeOf(changelog.Delete)
	}
	if in.Contains(changelog.UpdateBefore) {
		out |= changelog.ModeOf(changelog.Insert)
	}
	return out
}

// ProcessBatch forwards the accepted changes of b, turning halves of
// updates into deletions and insertions where the predicate splits them.
func (f *FilterRows[T]) ProcessBatch(b *runtime.Batch[changelog.Change[T]]) error {
	buf := f.buf
	buf.Data, buf.TS = buf.Data[:0], buf.TS[:0]
	emit := func(k changelog.Kind, row T, ts int64) {
		buf.Data = append(buf.Data, changelog.Change[T]{Kind: k, Row: row})
		buf.TS = append(buf.TS, ts)
	}
	for i := 0; i < len(b.Data); i++ {
		c, ts := b.Data[i], b.TS[i]
		switch c.Kind {
		case changelog.UpdateBefore:
			keepOld := f.pred(c.Row)
			if i+1 < len(b.Data) && b.Data[i+1].Kind == changelog.UpdateAfter {
				n := b.Data[i+1]
				keepNew := f.pred(n.Row)
				switch {
				case keepOld && keepNew:
					emit(changelog.UpdateBefore, c.Row, ts)
					emit(changelog.UpdateAfter, n.Row, b.TS[i+1])
				case keepOld:
					emit(changelog.Delete, c.Row, ts)
				case keepNew:
					emit(changelog.Insert, n.Row, b.TS[i+1])
				}
				i++
				continue
			}
			if keepOld {
				emit(changelog.Delete, c.Row, ts)
			}
		case changelog.UpdateAfter:
			switch {
			case f.pred(c.Row):
				emit(changelog.UpdateAfter, c.Row, ts)
			case f.upsert:
				emit(changelog.Delete, c.Row, ts)
			}
		case changelog.Delete:
			if f.upsert || f.pred(c.Row) {
				emit(changelog.Delete, c.Row, ts)
			}
		default:
			if f.pred(c.Row) {
				emit(c.Kind, c.Row, ts)
			}
		}
	}
	if len(buf.Data) == 0 {
		return nil
	}
	err := f.out.ProcessBatch(buf)
	clear(buf.Data)
	return err
}
