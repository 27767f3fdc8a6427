package main

import (
	"context"
	"io"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// join joins the orders with the users, keeping orders of unknown users
// (LEFT JOIN), and prints the final result table: the two inputs
// interleave in no fixed order, so their changelog may differ from run to
// run, but the table it describes does not.
func join(ctx context.Context, w io.Writer) error {
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	// The changes of a row must arrive in order: one split, one source subtask.
	orders := eddy.FromSlice(env, orderChanges(), eddy.NoWatermarks[changelog.Change[Order]]()).Parallelism(1)
	users := eddy.Inserts(eddy.FromSlice(env, []User{{"alice", "Paris"}, {"carol", "Rome"}}, eddy.NoWatermarks[User]()))
	joined := eddy.Join(
		eddy.GroupBy(orders, func(o Order) string { return o.User }),
		eddy.GroupBy(users, func(u User) string { return u.Name }),
		eddy.LeftJoin,
		func(o *Order, u *User) OrderCity {
			r := OrderCity{Order: o.ID, User: o.User}
			if u != nil {
				r.City = u.City
			}
			return r
		},
		eddy.StateTTL(24*time.Hour))
	out := eddy.Collect(joined)
	if err := env.Execute(ctx, "join"); err != nil {
		return err
	}
	printTable(w, out.Values())
	return nil
}

// temporalJoin prices each payment at the exchange rate valid at the
// payment's event time (FOR SYSTEM_TIME AS OF): the rates are an upsert
// stream keyed by currency, in which each change starts a new version.
func temporalJoin(ctx context.Context, w io.Writer) error {
	env := eddy.NewEnvironment()
	rates := eddy.AsChangelog(eddy.FromSlice(env, []changelog.Change[Rate]{
		changelog.InsertOf(Rate{Currency: "EUR", Cents: 110, At: 0}),
		changelog.Of(changelog.UpdateAfter, Rate{Currency: "EUR", Cents: 120, At: 10_000}),
	}, eddy.Monotonous(func(c changelog.Change[Rate]) int64 { return c.Row.At })), changelog.Upsert)
	payments := eddy.Inserts(eddy.FromSlice(env, []Payment{
		{ID: 1, Currency: "EUR", Amount: 2, At: 5_000},
		{ID: 2, Currency: "EUR", Amount: 2, At: 15_000},
		{ID: 3, Currency: "GBP", Amount: 1, At: 16_000},
	}, eddy.Monotonous(func(p Payment) int64 { return p.At })))
	priced := eddy.TemporalJoin(
		eddy.GroupBy(payments, func(p Payment) string { return p.Currency }),
		eddy.GroupBy(rates, func(r Rate) string { return r.Currency }),
		eddy.LeftJoin,
		func(p Payment, r *Rate) Priced {
			if r == nil {
				return Priced{Payment: p.ID, Cents: -1}
			}
			return Priced{Payment: p.ID, Cents: p.Amount * r.Cents}
		})
	out := eddy.Collect(priced)
	if err := env.Execute(ctx, "temporal-join"); err != nil {
		return err
	}
	printTable(w, out.Values())
	return nil
}

// customers is the external table of the lookupJoin section.
var customers = map[string][]Customer{
	"alice": {{Name: "alice", Segment: "gold"}},
}

// lookupJoin enriches each order with the customer an external table holds
// for its user, looked up asynchronously, 4 at a time, through a cache.
func lookupJoin(ctx context.Context, w io.Writer) error {
	env := eddy.NewEnvironment()
	orders := eddy.FromSlice(env, orderChanges(), eddy.NoWatermarks[changelog.Change[Order]]())
	lookup := func(ctx context.Context, name string) ([]Customer, error) {
		return customers[name], nil // a database or service call in a real job
	}
	enriched := eddy.LookupJoin(orders, func(o Order) string { return o.User }, lookup, eddy.LeftJoin,
		func(o Order, c *Customer) string {
			if c == nil {
				return o.User + " -"
			}
			return o.User + " " + c.Segment
		},
		eddy.LookupConcurrency(4), eddy.LookupCache(10_000, time.Minute),
		eddy.LookupTimeout(time.Second), eddy.LookupRetries(2, 100*time.Millisecond))
	eddy.PrintTo(enriched, w)
	return env.Execute(ctx, "lookup-join")
}
