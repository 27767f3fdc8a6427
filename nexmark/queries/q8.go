package queries

import (
	"slices"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/state"
)

// Q8Result is a row of q8: a person who registered and opened an auction in
// the same 10 s window.
type Q8Result struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Starttime is the start of the window.
	Starttime Time `json:"starttime"`
}

// q8Window is q8's tumbling window size in milliseconds.
var q8Window = (10 * time.Second).Milliseconds()

// q8Person is a person in q8's state.
type q8Person struct {
	Name  string
	Start int64
}

// q8Join joins, per person id, the person's window with the windows of the
// auctions the person sold; it emits when the watermark completes a window.
type q8Join struct {
	person  state.Value[q8Person]
	windows state.Value[[]int64]
}

func (f *q8Join) Open(ctx *eddy.KeyedContext[int64, Q8Result]) error {
	f.person = state.NewValue(ctx.Store(), state.ValueDescriptor[q8Person]{Name: "person"})
	f.windows = state.NewValue(ctx.Store(), state.ValueDescriptor[[]int64]{Name: "auction-windows"})
	return nil
}

func (f *q8Join) ProcessElement1(ctx *eddy.KeyedContext[int64, Q8Result], p nexmark.Person) error {
	start := floorDiv(p.DateTime, q8Window) * q8Window
	f.person.Update(q8Person{Name: p.Name, Start: start})
	ctx.RegisterEventTimeTimer(start + q8Window - 1)
	return nil
}

func (f *q8Join) ProcessElement2(ctx *eddy.KeyedContext[int64, Q8Result], a nexmark.Auction) error {
	start := floorDiv(a.DateTime, q8Window) * q8Window
	ws, _ := f.windows.Value()
	if slices.Contains(ws, start) {
		return nil
	}
	f.windows.Update(append(ws, start))
	ctx.RegisterEventTimeTimer(start + q8Window - 1)
	return nil
}

func (f *q8Join) OnTimer(ctx *eddy.KeyedContext[int64, Q8Result], ts int64) error {
	start := ts + 1 - q8Window
	ws, _ := f.windows.Value()
	sold := false
	if i := slices.Index(ws, start); i >= 0 {
		sold = true
		if ws = slices.Delete(ws, i, i+1); len(ws) == 0 {
			f.windows.Clear()
		} else {
			f.windows.Update(ws)
		}
	}
	if p, ok := f.person.Value(); ok && p.Start == start {
		if sold {
			ctx.Emit(Q8Result{ID: ctx.Key(), Name: p.Name, Starttime: Time(start)})
		}
		f.person.Clear()
	}
	return nil
}

// Q8 finds the persons who registered and opened an auction in the same
// 10 s window:
//
//	SELECT P.id, P.name, P.starttime
//	FROM (SELECT id, name, window_start AS starttime, window_end AS endtime
//	      FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
//	      GROUP BY id, name, window_start, window_end) P
//	JOIN (SELECT seller, window_start AS starttime, window_end AS endtime
//	      FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
//	      GROUP BY seller, window_start, window_end) A
//	ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime;
//
// Persons and auctions are keyed by person id; per key the operator keeps
// the person's window and the windows of its auctions until the watermark
// completes them.
func Q8(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q8Result] {
	events := eventSource(env, cfg, personKind|auctionKind)
	return eddy.CoProcessKeyed(eddy.ConnectKeyed(
		eddy.KeyBy(personsOf(events), func(p nexmark.Person) int64 { return p.ID }),
		eddy.KeyBy(auctionsOf(events, nil), func(a nexmark.Auction) int64 { return a.Seller })),
		func() eddy.KeyedCoProcessFunction[int64, nexmark.Person, nexmark.Auction, Q8Result] { return &q8Join{} }).Name("q8")
}
