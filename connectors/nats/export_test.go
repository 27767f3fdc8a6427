package nats

import "time"

// SetPublishTimeout sets how long writers wait for acknowledgements, and
// returns a function that restores it.
func SetPublishTimeout(d time.Duration) (restore func()) {
	old := publishTimeout
	publishTimeout = d
	return func() { publishTimeout = old }
}
