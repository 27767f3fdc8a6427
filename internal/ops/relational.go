package ops

import (
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/runtime"
	"github.com/eddystream/eddy/internal/state"
)

// relational is what the relational operators (group aggregation, joins,
// top-N, deduplication, normalisation) share: keyed state, an output of
// changes, and the forwarding of watermarks and end of input.
type relational[K comparable, T, R any] struct {
	*keyedBase[K, T]
	out  *Emitter[changelog.Change[R]]
	outs map[string]any
	ts   int64 // timestamp of the record being processed, for its output
	ttl  time.Duration
	// absent counts retractions of rows the operator holds no state for
	// (expired by the state TTL, or never seen): they change nothing.
	absent int64
}

func newRelational[K comparable, T, R any](ctx *runtime.Context, spec KeySpec[K, T], newBackend BackendFactory, ttl time.Duration, outs map[string]any) (*relational[K, T, R], error) {
	base, err := newKeyedBase(ctx, spec, newBackend)
	if err != nil {
		return nil, err
	}
	return &relational[K, T, R]{keyedBase: base, out: NewEmitter(outs[""].(runtime.Input[changelog.Change[R]])), outs: outs, ttl: ttl}, nil
}

// ttlConfig is the state TTL of the operator's tables: Flink's idle state
// retention, restarted by every write.
func (r *relational[K, T, R]) ttlConfig() state.TTLConfig {
	return state.TTLConfig{TTL: r.ttl}
}

// emit sends one change with the timestamp of the record being processed.
func (r *relational[K, T, R]) emit(kind changelog.Kind, row R) {
	r.out.Emit(changelog.Change[R]{Kind: kind, Row: row}, r.ts)
}

// emitUpdate sends an update as its two halves, which stay together: both
// go out in the same call, before any barrier can pass.
func (r *relational[K, T, R]) emitUpdate(before, after R) {
	r.emit(changelog.UpdateBefore, before)
	r.emit(changelog.UpdateAfter, after)
}

// retractedAbsent counts a retraction of a row the operator has no state
// for.
func (r *relational[K, T, R]) retractedAbsent() {
	r.absent++
	r.ctx.Metrics.RetractionsWithoutState.Add(1)
}

// cleanup deletes some expired state after a batch, when the operator has a
// TTL, so that state of idle keys goes away without being read again.
func (r *relational[K, T, R]) cleanup(n int) {
	if r.ttl > 0 {
		r.store.CleanupExpired(max(n, 64))
	}
}

// flush sends what was emitted.
func (r *relational[K, T, R]) flush() error { return r.out.Flush() }

// ProcessWatermark forwards the watermark after what was emitted.
func (r *relational[K, T, R]) ProcessWatermark(wm int64) error {
	if err := r.flush(); err != nil {
		return err
	}
	if err := r.out.Out().ProcessWatermark(wm); err != nil {
		return err
	}
	return ForwardWatermark(r.outs, wm)
}

// EndInput ends the outputs.
func (r *relational[K, T, R]) EndInput() error {
	if err := r.flush(); err != nil {
		return err
	}
	if err := r.out.Out().EndInput(); err != nil {
		return err
	}
	return ForwardEnd(r.outs)
}
