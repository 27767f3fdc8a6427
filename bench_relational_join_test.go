package eddy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector/connectortest"
)

// The join benchmarks join a stream of orders with a table of customers
// on the customer key, as a fact and a dimension table are joined: 100 000
// customers, one row each, and orders spread over them. Both inputs are
// insert-only.

const joinBenchKeys = 100_000

type benchOrder struct {
	ID, Customer, Amount int64
}

type benchCustomer struct {
	Customer, Region int64
}

type benchEnriched struct {
	Order, Customer, Amount, Region int64
	HasCustomer                     bool
}

func enrich(o *benchOrder, c *benchCustomer) benchEnriched {
	e := benchEnriched{Order: o.ID, Customer: o.Customer, Amount: o.Amount}
	if c != nil {
		e.Region, e.HasCustomer = c.Region, true
	}
	return e
}

// joinBenchBackend returns the options that select a state backend by
// name.
func joinBenchBackend(b *testing.B, backend string) []eddy.Option {
	if backend == "pebble" {
		return []eddy.Option{eddy.WithStateBackend(eddy.PebbleState(b.TempDir(), 256<<20))}
	}
	return nil
}

// BenchmarkJoin runs an inner and a left join of n orders with the 100 000
// customers, on each backend, at parallelism 1 and 2, and reports input
// changes (orders and customers) per second and per core.
func BenchmarkJoin(b *testing.B) {
	for _, backend := range []string{"heap", "pebble"} {
		for _, kind := range []eddy.JoinKind{eddy.InnerJoin, eddy.LeftJoin} {
			for _, p := range []int{1, 2} {
				name := map[eddy.JoinKind]string{eddy.InnerJoin: "inner", eddy.LeftJoin: "left"}[kind]
				b.Run(fmt.Sprintf("%s/%s/p%d", backend, name, p), func(b *testing.B) {
					n := int64(max(b.N, 1))
					env := eddy.NewEnvironment(append(joinBenchBackend(b, backend), eddy.WithParallelism(p))...)
					orders := eddy.Inserts(eddy.FromGenerator(env, eddy.GeneratorOptions{Count: n}, func(i int64) benchOrder {
						return benchOrder{ID: i, Customer: (i * 7919) % joinBenchKeys, Amount: i % 1000}
					}, eddy.NoWatermarks[benchOrder]()))
					customers := eddy.Inserts(eddy.FromGenerator(env, eddy.GeneratorOptions{Count: joinBenchKeys}, func(i int64) benchCustomer {
						return benchCustomer{Customer: i, Region: i % 50}
					}, eddy.NoWatermarks[benchCustomer]()))
					out := eddy.Join(eddy.GroupBy(orders, func(o benchOrder) int64 { return o.Customer }),
						eddy.GroupBy(customers, func(c benchCustomer) int64 { return c.Customer }), kind, enrich)
					eddy.Discard(out)
					runChangesJob(b, env, n+joinBenchKeys)
				})
			}
		}
	}
}

// runChangesJob executes env and reports input changes per second and per
// core of the process, as runJob does for records: CPU time over wall time
// is the number of cores used.
func runChangesJob(b *testing.B, env *eddy.Environment, changes int64) {
	b.Helper()
	b.ResetTimer()
	cpu0, wall0 := connectortest.CPUTime(), time.Now()
	if err := env.Execute(context.Background(), b.Name()); err != nil {
		b.Fatal(err)
	}
	wall, cpu := time.Since(wall0), connectortest.CPUTime()-cpu0
	b.StopTimer()
	b.ReportMetric(float64(changes)/wall.Seconds(), "changes/s")
	b.ReportMetric(float64(changes)/cpu.Seconds(), "changes/s/core")
	b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
}
