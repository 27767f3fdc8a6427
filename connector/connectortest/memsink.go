package connectortest

import (
	"context"
	"fmt"
	"sync"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// MemoryTx is the transaction of a MemorySink: the name of a buffer of
// records the sink holds in memory until the transaction commits or aborts.
type MemoryTx struct {
	// ID names the transaction within its sink.
	ID string `json:"id"`
}

// MemorySink is an exactly-once sink that keeps its committed records in
// memory: the outside system the conformance suite reads sources into. It is
// built with connector.TwoPhase, so it is transactional as a real sink is:
// its transactions outlive the jobs that write them (a job restarted or
// restored in the same process commits or aborts the transactions of the
// one before), and only what a completed checkpoint accounts for becomes
// visible.
//
// It also checks that the runtime drives it as connector.TwoPhaseCommitter
// says (no write after a pre-commit, no commit of a transaction that was not
// pre-committed or is unknown, no abort of a committed one) and reports
// every breach in Problems.
//
// A MemorySink is safe for concurrent use.
type MemorySink[T any] struct {
	mu        sync.Mutex
	next      int64
	open      map[string]*memTx[T] // begun, neither committed nor aborted
	done      map[string]bool      // committed
	committed []T
	problems  []string
	changed   chan struct{} // closed and replaced at every commit
}

type memTx[T any] struct {
	records      []T
	preCommitted bool
}

// NewMemorySink returns an empty sink.
func NewMemorySink[T any]() *MemorySink[T] {
	return &MemorySink[T]{open: map[string]*memTx[T]{}, done: map[string]bool{}, changed: make(chan struct{})}
}

// Sink returns the connector sink that writes into m. It accepts changelog
// streams of every mode, and keeps changes as they come.
func (m *MemorySink[T]) Sink() connector.TransactionalSink[T] {
	return memorySink[T]{connector.TwoPhase(func(connector.WriterContext) (connector.TwoPhaseCommitter[T, MemoryTx], error) {
		return memCommitter[T]{m}, nil
	})}
}

type memorySink[T any] struct{ connector.TransactionalSink[T] }

func (memorySink[T]) ChangelogMode() changelog.Mode { return changelog.Retract }

// Committed returns the records committed so far, in the order their
// transactions committed.
func (m *MemorySink[T]) Committed() []T {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]T(nil), m.committed...)
}

// Problems returns the breaches of the committer's contract seen so far.
func (m *MemorySink[T]) Problems() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.problems...)
}

// Clone returns a copy of m and of every transaction it holds, for a test
// that restores one savepoint into several jobs.
func (m *MemorySink[T]) Clone() *MemorySink[T] {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMemorySink[T]()
	c.next = m.next
	for id, tx := range m.open {
		c.open[id] = &memTx[T]{records: append([]T(nil), tx.records...), preCommitted: tx.preCommitted}
	}
	for id := range m.done {
		c.done[id] = true
	}
	c.committed = append([]T(nil), m.committed...)
	c.problems = append([]string(nil), m.problems...)
	return c
}

// WaitFor waits until at least n records are committed, or ctx is done.
func (m *MemorySink[T]) WaitFor(ctx context.Context, n int) error {
	for {
		m.mu.Lock()
		have, ch := len(m.committed), m.changed
		m.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d records committed: %w", have, n, ctx.Err())
		}
	}
}

// problem records a breach and returns it as an error.
func (m *MemorySink[T]) problem(format string, args ...any) error {
	err := fmt.Errorf("memory sink: "+format, args...)
	m.problems = append(m.problems, err.Error())
	return err
}

// memCommitter is the committer of one subtask; all the state is in the
// sink, as it would be in an outside system.
type memCommitter[T any] struct{ m *MemorySink[T] }

func (c memCommitter[T]) Begin() (MemoryTx, error) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	tx := MemoryTx{ID: fmt.Sprintf("tx-%d", m.next)}
	m.open[tx.ID] = &memTx[T]{}
	return tx, nil
}

func (c memCommitter[T]) Write(tx *MemoryTx, v T) error {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.open[tx.ID]
	switch {
	case t == nil:
		return m.problem("write into %s, which is not open", tx.ID)
	case t.preCommitted:
		return m.problem("write into %s after its pre-commit", tx.ID)
	}
	t.records = append(t.records, v)
	return nil
}

func (c memCommitter[T]) PreCommit(tx *MemoryTx) error {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.open[tx.ID]
	if t == nil {
		return m.problem("pre-commit of %s, which is not open", tx.ID)
	}
	t.preCommitted = true
	return nil
}

func (c memCommitter[T]) Commit(tx MemoryTx) error {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done[tx.ID] {
		return nil // committed before: Commit is idempotent
	}
	t := m.open[tx.ID]
	switch {
	case t == nil:
		return m.problem("commit of %s, which was aborted, discarded as a leftover, or never begun", tx.ID)
	case !t.preCommitted:
		return m.problem("commit of %s, which was not pre-committed", tx.ID)
	}
	m.committed = append(m.committed, t.records...)
	m.done[tx.ID] = true
	delete(m.open, tx.ID)
	close(m.changed)
	m.changed = make(chan struct{})
	return nil
}

func (c memCommitter[T]) Abort(tx MemoryTx) error {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done[tx.ID] {
		return m.problem("abort of %s, which was committed", tx.ID)
	}
	delete(m.open, tx.ID)
	return nil
}

// Recover discards the transactions that neither list names: those begun
// after the checkpoint the job restores from.
func (c memCommitter[T]) Recover(pending, current []MemoryTx) error {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	keep := map[string]bool{}
	for _, tx := range pending {
		keep[tx.ID] = true
	}
	for _, tx := range current {
		keep[tx.ID] = true
	}
	for id := range m.open {
		if !keep[id] {
			delete(m.open, id)
		}
	}
	return nil
}
