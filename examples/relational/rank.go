package main

import (
	"context"
	"fmt"
	"io"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// sales is the insert-only input of the ranking sections.
func sales() []Sale {
	return []Sale{
		{"books", "atlas", 30},
		{"books", "novel", 50},
		{"toys", "ball", 10},
		{"books", "poems", 40},
		{"books", "atlas", 60},
	}
}

// byAmount orders sales by amount, greatest first, then by product, so that
// no two rows tie.
func byAmount(a, b Sale) bool {
	if a.Amount != b.Amount {
		return a.Amount > b.Amount
	}
	return a.Product < b.Product
}

// topN keeps the two largest sales of each category.
func topN(ctx context.Context, w io.Writer) error {
	env := eddy.NewEnvironment()
	src := eddy.Inserts(eddy.FromSlice(env, sales(), eddy.NoWatermarks[Sale]()))
	top := eddy.TopN(eddy.GroupBy(src, func(s Sale) string { return s.Category }), 2, byAmount)
	eddy.PrintTo(top, w)
	return env.Execute(ctx, "top-n")
}

// topNRanked is topN with each row's rank: rows whose rank changes are
// updated (-U, +U).
func topNRanked(ctx context.Context, w io.Writer) error {
	env := eddy.NewEnvironment()
	src := eddy.Inserts(eddy.FromSlice(env, sales(), eddy.NoWatermarks[Sale]()))
	top := eddy.TopNRanked(eddy.GroupBy(src, func(s Sale) string { return s.Category }), 2, byAmount)
	eddy.PrintTo(top, w)
	return env.Execute(ctx, "top-n-ranked")
}

// deduplicate keeps the first sale of each product, in arrival order (an
// insert-only result), and the last one, as an upsert stream (+I for a
// product's first sale, +U for each later one).
func deduplicate(ctx context.Context, w io.Writer) error {
	env := eddy.NewEnvironment()
	src := eddy.Inserts(eddy.FromSlice(env, sales(), eddy.NoWatermarks[Sale]()))
	perProduct := eddy.GroupBy(src, func(s Sale) string { return s.Product })
	first := eddy.Collect(eddy.Deduplicate(perProduct, eddy.KeepFirst, eddy.ProcessingTime))
	last := eddy.Collect(eddy.Deduplicate(perProduct, eddy.KeepLast, eddy.ProcessingTime, eddy.UpsertOutput()))
	if err := env.Execute(ctx, "deduplicate"); err != nil {
		return err
	}
	printChanges(w, "first", first.Values())
	printChanges(w, "last", last.Values())
	return nil
}

// printChanges writes changes one a line, each after label.
func printChanges[T any](w io.Writer, label string, changes []changelog.Change[T]) {
	for _, c := range changes {
		fmt.Fprintln(w, label, c)
	}
}
