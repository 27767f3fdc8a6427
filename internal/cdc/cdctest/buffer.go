package cdctest

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// SyncBuffer is a buffer safe for concurrent writers and readers, such as
// a log destination or a print sink's writers and the test.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what the buffer holds.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitLines waits until text, called again and again, holds each of lines
// (with old replaced by new in each) as a line of its own, failing t with
// the first one missing once ctx is done.
func WaitLines(t testing.TB, ctx context.Context, text func() string, old, new string, lines ...string) {
	t.Helper()
	for {
		got := text()
		missing := ""
		for _, l := range lines {
			if !strings.Contains(got, strings.ReplaceAll(l, old, new)+"\n") {
				missing = l
				break
			}
		}
		if missing == "" {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("no line %q in the events:\n%s", missing, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
