package state

import (
	"strings"
	"testing"
)

type fakeBackend struct{}

func (fakeBackend) KeyGroups() KeyGroupRange { return KeyGroupRange{Start: 0, End: 1} }
func (fakeBackend) MaxParallelism() int      { return 1 }
func (fakeBackend) Close() error             { return nil }

func TestTableKinds(t *testing.T) {
	if got := typeName[VoidNamespace](); got != "void" {
		t.Errorf("typeName[VoidNamespace] = %q", got)
	}
	if got := typeName[[]Timed[string]](); got != "[]state.Timed[string]" {
		t.Errorf("typeName = %q", got)
	}
}

func TestNewTableOnUnknownBackend(t *testing.T) {
	_, err := NewValueTable[int64, VoidNamespace, int64](fakeBackend{}, "x", nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "neither") {
		t.Errorf("NewValueTable on a plain Backend: %v", err)
	}
	_, err = NewMapTable[int64, VoidNamespace, int64, int64](fakeBackend{}, "x", nil, nil, nil, nil)
	if err == nil {
		t.Error("NewMapTable on a plain Backend succeeded")
	}
	_, err = NewValueTable[int64, VoidNamespace, any](fakeBackend{}, "x", nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), `table "x": value:`) {
		t.Errorf("a value type without a codec: %v", err)
	}
}
