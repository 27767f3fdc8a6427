package cdc

import (
	"context"
	"time"
)

// Connect opens a connection with open, trying again up to retries times
// ('connect.max-retries'), 200 ms longer before each new try, while final
// does not say that its error will not get better (a refused login). The
// error of the last try goes through explain, which says what it means;
// the end of ctx stops the tries with ctx's error.
func Connect[T any](ctx context.Context, retries int, open func() (T, error), final func(error) bool, explain func(error) error) (T, error) {
	var zero T
	var last error
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return zero, ctx.Err()
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		conn, err := open()
		if err == nil {
			return conn, nil
		}
		last = err
		if final(err) {
			break
		}
	}
	return zero, explain(last)
}
