package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// kvStore is a key-value store that upsert sinks write to: a stand-in for
// a database table with a primary key or a compacted topic.
type kvStore struct {
	mu   sync.Mutex
	rows map[string]string
}

// lines returns the store's rows as "key: row" lines, sorted.
func (s *kvStore) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k, v := range s.rows {
		out = append(out, k+": "+v)
	}
	slices.Sort(out)
	return out
}

// kvSink writes a changelog of T into a kvStore by key: +I and +U put the
// row under its key, -D deletes the key. It is idempotent, so a replay after
// a failure converges to the same store.
type kvSink[T any] struct {
	store *kvStore
	key   func(T) string
}

// ChangelogMode says the sink applies upserts and deletions by key.
func (s kvSink[T]) ChangelogMode() changelog.Mode { return changelog.Upsert }

// NewWriter returns the writer of one sink subtask.
func (s kvSink[T]) NewWriter(connector.WriterContext) (connector.Writer[changelog.Change[T]], error) {
	return kvWriter[T](s), nil
}

// kvWriter is the writer of a kvSink.
type kvWriter[T any] kvSink[T]

// Write applies the changes to the store.
func (w kvWriter[T]) Write(changes []changelog.Change[T], _ []int64) error {
	w.store.mu.Lock()
	defer w.store.mu.Unlock()
	for _, c := range changes {
		k := w.key(c.Row)
		switch c.Kind {
		case changelog.Insert, changelog.UpdateAfter:
			w.store.rows[k] = fmt.Sprint(c.Row)
		case changelog.Delete:
			delete(w.store.rows, k)
		default:
			return fmt.Errorf("kv sink: unexpected %v", c.Kind)
		}
	}
	return nil
}

// Flush does nothing: every write is applied at once.
func (w kvWriter[T]) Flush() error { return nil }

// Close does nothing.
func (w kvWriter[T]) Close() error { return nil }

// writeUpserts writes two changelogs into key-value stores. The per-user
// aggregate is unique per user, its sink key: KeyedBySinkKey says so, and
// its changes go straight to the sink, without their -U halves. The orders
// table is keyed by order id but written by user: several orders may hold
// one user at once, so WriteUpserts puts an upsert materializer before the
// sink, which writes each user's latest order still in the table.
func writeUpserts(ctx context.Context, w io.Writer) error {
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	// The changes of a row must arrive in order: one split, one source subtask.
	orders := eddy.FromSlice(env, orderChanges(), eddy.NoWatermarks[changelog.Change[Order]]()).Parallelism(1)
	stats := eddy.GroupAggregate(eddy.GroupBy(orders, func(o Order) string { return o.User }), userStats())
	rows := eddy.MapRows(stats, func(g eddy.Grouped[string, UserStats]) UserStats {
		g.Value.User = g.Key
		return g.Value
	})
	byUser := func(s UserStats) string { return s.User }
	perUser := &kvStore{rows: map[string]string{}}
	eddy.WriteUpserts(rows, "user-stats", byUser, kvSink[UserStats]{store: perUser, key: byUser}, eddy.KeyedBySinkKey())
	orderUser := func(o Order) string { return o.User }
	latest := &kvStore{rows: map[string]string{}}
	eddy.WriteUpserts(orders, "latest-order", orderUser, kvSink[Order]{store: latest, key: orderUser})
	if err := env.Execute(ctx, "write-upserts"); err != nil {
		return err
	}
	for _, l := range perUser.lines() {
		fmt.Fprintln(w, "user-stats", l)
	}
	for _, l := range latest.lines() {
		fmt.Fprintln(w, "latest-order", l)
	}
	return nil
}
