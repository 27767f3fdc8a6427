package pebble

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/eddystream/eddy/internal/state"
)

// A storage failure (here: an SST deleted under the DB) panics with a
// *state.BackendError.
func TestStorageErrorPanics(t *testing.T) {
	b := open(t, state.KeyGroupRange{Start: 0, End: 1}, 1)
	b.Set([]byte("a"), []byte("1"))
	if err := b.db.Flush(); err != nil {
		t.Fatal(err)
	}
	ssts, _ := filepath.Glob(filepath.Join(b.Dir(), "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no SST after flush")
	}
	for _, f := range ssts {
		os.Remove(f)
	}
	defer func() {
		var be *state.BackendError
		if e, ok := recover().(error); !ok || !errors.As(e, &be) {
			t.Errorf("recovered %v, want *state.BackendError", e)
		} else {
			t.Log(be)
		}
	}()
	b.Get([]byte("a"))
	t.Error("Get of a key in a deleted SST did not panic")
}
