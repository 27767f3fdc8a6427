package cdctest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// StatusSource is a source that keeps the enumerator and readers it makes,
// so that a test can call their Status (connector.StatusReporter) once
// the job has ended.
type StatusSource struct {
	connector.Source[connector.TableRecord]

	mu      sync.Mutex
	enum    connector.Enumerator
	readers []connector.Reader[connector.TableRecord]
}

// NewStatusSource wraps src.
func NewStatusSource(src connector.Source[connector.TableRecord]) *StatusSource {
	return &StatusSource{Source: src}
}

// ChangelogMode is the wrapped source's.
func (s *StatusSource) ChangelogMode() changelog.Mode {
	if m, ok := s.Source.(interface{ ChangelogMode() changelog.Mode }); ok {
		return m.ChangelogMode()
	}
	return changelog.InsertOnly
}

// NewEnumerator returns the wrapped source's enumerator, and keeps it.
func (s *StatusSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	e, err := s.Source.NewEnumerator(ctx, restored)
	s.mu.Lock()
	s.enum = e
	s.mu.Unlock()
	return e, err
}

// NewReader returns the wrapped source's reader, and keeps it.
func (s *StatusSource) NewReader(ctx connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	r, err := s.Source.NewReader(ctx)
	if err == nil {
		s.mu.Lock()
		s.readers = append(s.readers, r)
		s.mu.Unlock()
	}
	return r, err
}

// EnumeratorStatus returns the status of the last enumerator made, nil if
// it reports none. Call it once the job has ended.
func (s *StatusSource) EnumeratorStatus() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.enum.(connector.StatusReporter); ok {
		return r.Status()
	}
	return nil
}

// ReaderStatuses returns the status of each reader made, in the order they
// were made (nil for one that reports none). Call it once the job has
// ended.
func (s *StatusSource) ReaderStatuses() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]map[string]any, len(s.readers))
	for i, r := range s.readers {
		if sr, ok := r.(connector.StatusReporter); ok {
			out[i] = sr.Status()
		}
	}
	return out
}

// IdleLagBytes is the most lagBytes a reader that has caught up may
// report: the server may have written a little more since it last said
// how far it sent the log (to other tables, other databases).
const IdleLagBytes = 16 << 10

// CheckLagBytes runs j, which reads a table of before rows, with
// checkpoints (50 ms apart unless j says), in batches of 16 records, slowed down by 2 ms a record. Once the reader reads the
// stream and has caught up (lagBytes at most IdleLagBytes), write writes
// changes, after records in all, of well over IdleLagBytes: while the
// slowed reader reads them, its lagBytes must exceed IdleLagBytes; then it
// reads on at full speed, and once every record is in, lagBytes must fall
// back to at most IdleLagBytes. It returns the statuses seen then.
func CheckLagBytes(t testing.TB, j Job, before int, write func(), after int) (behind, caughtUp map[string]any) {
	t.Helper()
	var released atomic.Bool
	j.BatchSize, j.Timeout = 16, 5*time.Minute
	if j.Checkpoints == 0 {
		j.Checkpoints = 50 * time.Millisecond // the sink commits at checkpoints
	}
	j.Hook = func(r connector.TableRecord) connector.TableRecord {
		if !released.Load() {
			time.Sleep(2 * time.Millisecond)
		}
		return r
	}
	r := j.Start(t)
	r.WaitFor(t, before)
	lag := func(m map[string]any) (int64, bool) {
		l, ok := m["lagBytes"].(int64)
		return l, ok
	}
	r.WaitStatus(t, "the reader caught up with the server", func(m map[string]any) bool {
		l, ok := lag(m)
		return ok && l <= IdleLagBytes
	})
	write()
	behind = r.WaitStatus(t, "the reader reported lagBytes over IdleLagBytes", func(m map[string]any) bool {
		l, ok := lag(m)
		return ok && l > IdleLagBytes
	})
	released.Store(true)
	r.WaitFor(t, after)
	caughtUp = r.WaitStatus(t, "the reader caught up again", func(m map[string]any) bool {
		l, ok := lag(m)
		return ok && l <= IdleLagBytes
	})
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	return behind, caughtUp
}
