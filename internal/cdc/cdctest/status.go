package cdctest

import (
	"sync"

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
