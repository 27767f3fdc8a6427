package connectortest

import (
	"sync"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// StatusSource keeps the enumerator and readers a source makes, so that a
// test can call their Status (connector.StatusReporter) once the job has
// ended. Give the job Source(), not the StatusSource itself.
type StatusSource[T any] struct {
	src connector.Source[T]

	mu      sync.Mutex
	enum    connector.Enumerator
	readers []connector.Reader[T]
}

// NewStatusSource wraps src.
func NewStatusSource[T any](src connector.Source[T]) *StatusSource[T] {
	return &StatusSource[T]{src: src}
}

// Source returns the source to give the job: src, whose enumerator and
// readers s keeps. It is a connector.ChangelogSource when src is one.
func (s *StatusSource[T]) Source() connector.Source[T] {
	w := &keepingSource[T]{s}
	if cs, ok := s.src.(connector.ChangelogSource); ok {
		return changelogKeepingSource[T]{w, cs.ChangelogMode()}
	}
	return w
}

// EnumeratorStatus returns the status of the last enumerator made, nil if
// it reports none. Call it once the job has ended.
func (s *StatusSource[T]) EnumeratorStatus() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.enum.(connector.StatusReporter); ok {
		return r.Status()
	}
	return nil
}

// Readers returns how many readers were made.
func (s *StatusSource[T]) Readers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.readers)
}

// ReaderStatuses returns the status of each reader made, in the order they
// were made (nil for one that reports none). Call it once the job has
// ended.
func (s *StatusSource[T]) ReaderStatuses() []map[string]any {
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

// keepingSource is the source a StatusSource gives the job.
type keepingSource[T any] struct{ s *StatusSource[T] }

func (k *keepingSource[T]) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	e, err := k.s.src.NewEnumerator(ctx, restored)
	if err == nil {
		k.s.mu.Lock()
		k.s.enum = e
		k.s.mu.Unlock()
	}
	return e, err
}

func (k *keepingSource[T]) NewReader(ctx connector.ReaderContext) (connector.Reader[T], error) {
	r, err := k.s.src.NewReader(ctx)
	if err == nil {
		k.s.mu.Lock()
		k.s.readers = append(k.s.readers, r)
		k.s.mu.Unlock()
	}
	return r, err
}

// changelogKeepingSource is a keepingSource of a changelog source.
type changelogKeepingSource[T any] struct {
	*keepingSource[T]
	mode changelog.Mode
}

func (c changelogKeepingSource[T]) ChangelogMode() changelog.Mode { return c.mode }
