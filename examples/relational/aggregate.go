package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/changelog"
)

// orderChanges is a retracting changelog of the orders table: three
// insertions, an update of order 1 (its -U then its +U), and the deletion of
// order 2.
func orderChanges() []changelog.Change[Order] {
	return []changelog.Change[Order]{
		changelog.InsertOf(Order{ID: 1, User: "alice", Product: "book", Amount: 12}),
		changelog.InsertOf(Order{ID: 2, User: "bob", Product: "pen", Amount: 3}),
		changelog.InsertOf(Order{ID: 3, User: "alice", Product: "pen", Amount: 5}),
		changelog.Of(changelog.UpdateBefore, Order{ID: 1, User: "alice", Product: "book", Amount: 12}),
		changelog.Of(changelog.UpdateAfter, Order{ID: 1, User: "alice", Product: "book", Amount: 4}),
		changelog.Of(changelog.Delete, Order{ID: 2, User: "bob", Product: "pen", Amount: 3}),
	}
}

// userStats is the aggregate of the groupAggregate section, as SQL's
//
//	SELECT user, SUM(amount), MAX(amount), COUNT(DISTINCT product),
//	       COUNT(*) FILTER (WHERE amount >= 10)
//	FROM orders GROUP BY user
//
// Every part can take rows back: Sum subtracts, MaxRetract and Distinct
// keep their values with counts in state, Filter retracts through Count.
func userStats() agg.CombinedFunction[Order, agg.Tuple4[int64, agg.Optional[int64], int64, int64], UserStats] {
	amount := func(o Order) int64 { return o.Amount }
	return agg.Combine4(
		agg.Sum(amount),
		agg.MaxRetract(amount),
		agg.Distinct(func(o Order) string { return o.Product }, agg.Count[string]()),
		agg.Filter(func(o Order) bool { return o.Amount >= 10 }, agg.Count[Order]()),
		func(total, largest, products, big int64) UserStats {
			return UserStats{Total: total, Largest: largest, Products: products, Big: big}
		})
}

// groupAggregate aggregates the orders per user and prints the changelog of
// the result table.
func groupAggregate(ctx context.Context, w io.Writer) error {
	env := eddy.NewEnvironment()
	orders := eddy.FromSlice(env, orderChanges(), eddy.NoWatermarks[changelog.Change[Order]]())
	perUser := eddy.GroupBy(orders, func(o Order) string { return o.User })
	stats := eddy.GroupAggregate(perUser, userStats())
	rows := eddy.MapRows(stats, func(g eddy.Grouped[string, UserStats]) UserStats {
		g.Value.User = g.Key
		return g.Value
	})
	fmt.Fprintln(w, "mode", stats.ChangelogMode())
	eddy.PrintTo(rows, w)
	return env.Execute(ctx, "group-aggregate")
}

// Click is a page view.
type Click struct {
	Page string
}

// miniBatch counts clicks per page with mini-batches and a local
// pre-aggregation: each batch of up to 1000 rows (or 50 ms of them) costs
// one state access per page, not one per click.
func miniBatch(ctx context.Context, w io.Writer) error {
	env := eddy.NewEnvironment(eddy.WithParallelism(2))
	var clicks []Click
	for i := range 3000 {
		clicks = append(clicks, Click{Page: []string{"home", "home", "cart", "about"}[i%4]})
	}
	src := eddy.Inserts(eddy.FromSlice(env, clicks, eddy.NoWatermarks[Click]()))
	counts := eddy.GroupAggregate(eddy.GroupBy(src, func(c Click) string { return c.Page }),
		agg.Count[Click](), eddy.MiniBatch(1000, 50*time.Millisecond), eddy.LocalGlobal())
	out := eddy.Collect(counts)
	if err := env.Execute(ctx, "mini-batch"); err != nil {
		return err
	}
	printTable(w, out.Values())
	return nil
}
