package queries

import (
	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/state"
)

// Q3Result is a row of q3: a seller in OR, ID or CA and an auction of
// theirs in category 10.
type Q3Result struct {
	Name  string `json:"name"`
	City  string `json:"city"`
	State string `json:"state"`
	ID    int64  `json:"id"`
}

// q3Person is a person in q3's state; Match says whether the person's state
// passes the filter (the other fields are kept only then).
type q3Person struct {
	Name, City, State string
	Match             bool
}

// q3Join joins category-10 auctions to their seller, keyed by person id.
type q3Join struct {
	person  state.Value[q3Person]
	pending state.List[int64]
}

func (f *q3Join) Open(ctx *eddy.KeyedContext[int64, Q3Result]) error {
	f.person = state.NewValue(ctx.Store(), state.ValueDescriptor[q3Person]{Name: "person"})
	f.pending = state.NewList(ctx.Store(), state.ListDescriptor[int64]{Name: "pending-auctions"})
	return nil
}

// ProcessElement1 handles a person: it is kept (a marker if the state does
// not match, so that the person's auctions are dropped on arrival), and the
// auctions that arrived before it are joined.
func (f *q3Join) ProcessElement1(ctx *eddy.KeyedContext[int64, Q3Result], p nexmark.Person) error {
	s := q3Person{Match: p.State == "OR" || p.State == "ID" || p.State == "CA"}
	if s.Match {
		s.Name, s.City, s.State = p.Name, p.City, p.State
	}
	f.person.Update(s)
	if ids := f.pending.Get(); len(ids) > 0 {
		if s.Match {
			for _, id := range ids {
				ctx.Emit(Q3Result{Name: s.Name, City: s.City, State: s.State, ID: id})
			}
		}
		f.pending.Clear()
	}
	return nil
}

// ProcessElement2 handles an auction of category 10.
func (f *q3Join) ProcessElement2(ctx *eddy.KeyedContext[int64, Q3Result], a nexmark.Auction) error {
	p, ok := f.person.Value()
	switch {
	case !ok:
		f.pending.Add(a.ID)
	case p.Match:
		ctx.Emit(Q3Result{Name: p.Name, City: p.City, State: p.State, ID: a.ID})
	}
	return nil
}

// Q3 finds who sells in OR, ID or CA in category 10, and which auctions:
//
//	SELECT P.name, P.city, P.state, A.id
//	FROM auction AS A INNER JOIN person AS P on A.seller = P.id
//	WHERE A.category = 10 and (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA');
//
// It is an incremental, unbounded join keyed by person id: a match is
// emitted as soon as both sides have arrived. Persons are kept; an auction
// is kept only until its seller arrives (person ids are unique).
func Q3(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[Q3Result] {
	events := eventSource(env, cfg, personKind|auctionKind)
	auctions := auctionsOf(events, func(a *nexmark.Auction) bool { return a.Category == 10 })
	return eddy.CoProcessKeyed(eddy.ConnectKeyed(
		eddy.KeyBy(personsOf(events), func(p nexmark.Person) int64 { return p.ID }),
		eddy.KeyBy(auctions, func(a nexmark.Auction) int64 { return a.Seller })),
		func() eddy.KeyedCoProcessFunction[int64, nexmark.Person, nexmark.Auction, Q3Result] { return &q3Join{} }).Name("q3")
}
