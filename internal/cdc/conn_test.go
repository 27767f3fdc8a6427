package cdc

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestConnect: a failing open is tried 1 + retries times, unless its
// error is final; the last error goes through explain; a success ends the
// tries.
func TestConnect(t *testing.T) {
	errRefused, errDenied := errors.New("refused"), errors.New("denied")
	explain := func(err error) error { return fmt.Errorf("explained: %w", err) }
	for _, c := range []struct {
		name    string
		fail    []error // the errors of the tries, then success
		retries int
		tries   int
		err     error
	}{
		{"retried", []error{errRefused, errRefused}, 1, 2, errRefused},
		{"final", []error{errDenied, errRefused}, 3, 1, errDenied},
		{"success", []error{errRefused}, 2, 2, nil},
	} {
		tries := 0
		v, err := Connect(context.Background(), c.retries, func() (int, error) {
			tries++
			if tries <= len(c.fail) {
				return 0, c.fail[tries-1]
			}
			return 7, nil
		}, func(err error) bool { return err == errDenied }, explain)
		if tries != c.tries {
			t.Errorf("%s: %d tries, want %d", c.name, tries, c.tries)
		}
		switch {
		case c.err == nil && (err != nil || v != 7):
			t.Errorf("%s: got %d, %v", c.name, v, err)
		case c.err != nil && (!errors.Is(err, c.err) || err.Error() != "explained: "+c.err.Error()):
			t.Errorf("%s: error %v, want the explained %v", c.name, err, c.err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Connect(ctx, 3, func() (int, error) { return 0, errRefused }, func(error) bool { return false }, explain); !errors.Is(err, context.Canceled) {
		t.Errorf("with the context done: %v", err)
	}
}

type col struct{ name string }

func colName(c *col) string { return c.name }

// TestColumnIndex: an exact match wins over one without regard to case.
func TestColumnIndex(t *testing.T) {
	cols := []col{{"Id"}, {"id"}, {"Name"}}
	for name, want := range map[string]int{"id": 1, "Id": 0, "ID": 0, "name": 2, "x": -1} {
		if got := ColumnIndex(cols, colName, name); got != want {
			t.Errorf("ColumnIndex(%q) = %d, want %d", name, got, want)
		}
	}
	if got := ColumnNames(cols, colName); got != "Id, id, Name" {
		t.Errorf("ColumnNames = %q", got)
	}
}
