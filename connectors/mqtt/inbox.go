package mqtt

import (
	"sync"
	"time"
)

// inbox holds the messages a reader's links received until Read emits
// them. A link that finds it full waits, which slows its connection down
// (with QoS 1 and 2 the broker's in-flight window bounds what arrives
// anyway).
type inbox struct {
	mu     sync.Mutex
	items  []*delivery
	head   int
	limit  int
	ready  chan struct{} // signalled when messages arrive
	space  chan struct{} // closed, and replaced, when Read takes messages
	closed chan struct{}
}

func newInbox(limit int) *inbox {
	return &inbox{limit: limit, ready: make(chan struct{}, 1), space: make(chan struct{}), closed: make(chan struct{})}
}

// put adds a message, waiting while the inbox is full; it drops it once
// the inbox is closed.
func (b *inbox) put(d *delivery) {
	b.mu.Lock()
	for len(b.items)-b.head >= b.limit {
		space := b.space
		b.mu.Unlock()
		select {
		case <-space:
		case <-b.closed:
			return
		}
		b.mu.Lock()
	}
	b.items = append(b.items, d)
	b.mu.Unlock()
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

// take appends up to n messages to dst, waiting up to wait for the first.
func (b *inbox) take(dst []*delivery, n int, wait time.Duration) []*delivery {
	b.mu.Lock()
	if b.head == len(b.items) && wait > 0 {
		b.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-b.ready:
		case <-t.C:
		}
		t.Stop()
		b.mu.Lock()
	}
	k := min(n, len(b.items)-b.head)
	dst = append(dst, b.items[b.head:b.head+k]...)
	clear(b.items[b.head : b.head+k])
	b.head += k
	if b.head == len(b.items) {
		b.items, b.head = b.items[:0], 0
	} else if b.head > 4096 && b.head > len(b.items)/2 {
		b.items = b.items[:copy(b.items, b.items[b.head:])]
		b.head = 0
	}
	if k > 0 {
		close(b.space)
		b.space = make(chan struct{})
	}
	b.mu.Unlock()
	return dst
}

// close releases the links waiting to put.
func (b *inbox) close() {
	select {
	case <-b.closed:
	default:
		close(b.closed)
	}
}
