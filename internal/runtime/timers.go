package runtime

import "container/heap"

// wakeup is a processing-time callback registered by an operator.
type wakeup struct {
	ts  int64
	seq int64
	fn  func(now int64) error
	ctx *Context
}

// wakeups is a min-heap of callbacks ordered by time, then registration.
type wakeups []wakeup

func (w wakeups) Len() int { return len(w) }
func (w wakeups) Less(i, j int) bool {
	if w[i].ts != w[j].ts {
		return w[i].ts < w[j].ts
	}
	return w[i].seq < w[j].seq
}
func (w wakeups) Swap(i, j int) { w[i], w[j] = w[j], w[i] }
func (w *wakeups) Push(x any)   { *w = append(*w, x.(wakeup)) }
func (w *wakeups) Pop() any {
	old := *w
	x := old[len(old)-1]
	*w = old[:len(old)-1]
	return x
}

// procTimers holds the processing-time callbacks of one subtask.
type procTimers struct {
	h   wakeups
	seq int64
}

func (p *procTimers) add(ts int64, fn func(int64) error, ctx *Context) {
	p.seq++
	heap.Push(&p.h, wakeup{ts: ts, seq: p.seq, fn: fn, ctx: ctx})
}

// next returns the time of the earliest callback.
func (p *procTimers) next() (int64, bool) {
	if len(p.h) == 0 {
		return 0, false
	}
	return p.h[0].ts, true
}

// fire runs every callback due at now, including ones they register.
func (p *procTimers) fire(now int64) error {
	for len(p.h) > 0 && p.h[0].ts <= now {
		w := heap.Pop(&p.h).(wakeup)
		if err := callGuarded(w.ctx, func() error { return w.fn(now) }); err != nil {
			return err
		}
	}
	return nil
}

// callGuarded calls fn, attributing its error or panic to ctx's operator.
func callGuarded(ctx *Context, fn func() error) (err error) {
	defer ctx.recoverInto(&err)
	return ctx.wrap(fn())
}
