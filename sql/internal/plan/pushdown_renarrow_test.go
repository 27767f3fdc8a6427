package plan

import (
	"fmt"
	"testing"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
)

// TestRenarrowedScan checks that a Calc reading a few columns of a Calc over
// a scan already narrowed to many (a view's Calc, below a join that prunes
// the columns it reads) narrows the scan again to the fields it reads.
func TestRenarrowedScan(t *testing.T) {
	s := &Script{Cat: NewCatalog(nil)}
	if _, err := s.Exec(`CREATE TABLE nexmark (
    event_type INT,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>,
    dateTime AS bid.dateTime,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'events.num' = '1000');`); err != nil {
		t.Fatal(err)
	}
	src := "SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.extra, dateTime FROM nexmark"
	st, err := parser.ParseStatement(src)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newQueryPlanner(s.Cat, src).query(st.(*parser.QueryStatement).Query, nil)
	if err != nil {
		t.Fatal(err)
	}
	view, ok := r.(*CalcRel)
	if !ok {
		t.Fatalf("planned %T, want a Calc", r)
	}
	for {
		in, ok := view.Input.(*CalcRel)
		if !ok {
			break
		}
		view = view.fused(in) // the computed column's Calc
	}
	view = view.narrowed(s.Cat)
	scan, ok := view.Input.(*ScanRel)
	if !ok || len(scan.paths) != 6 {
		t.Fatalf("the view reads %T, want a scan of its six fields", view.Input)
	}
	// Read price and auction alone, as a pruned join's side does.
	rt := view.Schema()
	col := func(i int) expr.Expr { return &expr.Column{Index: i, Name: rt.Field(i).Name, T: rt.FieldType(i)} }
	side := newCalc(view, []expr.Expr{col(2), col(0)}, []string{"price", "auction"}, nil).fused(view)
	got := side.narrowed(s.Cat)
	n, ok := got.Input.(*ScanRel)
	if !ok {
		t.Fatalf("narrowed over %T", got.Input)
	}
	// The watermark reads the bid's dateTime too.
	if want := "[[1 2] [1 0] [1 5]]"; fmt.Sprint(n.paths) != want {
		t.Fatalf("the side's scan reads %v, want %s", n.paths, want)
	}
	if got.Projs[0].String() != "`bid_price`" || got.Projs[1].String() != "`bid_auction`" {
		t.Fatalf("projections %v over %v", got.Projs, n.rt)
	}
	// A Calc reading every field of the narrow scan keeps it.
	all := make([]expr.Expr, rt.Len())
	for i := range all {
		all[i] = col(i)
	}
	whole := newCalc(view, all, rt.Names(), nil).fused(view)
	if kept := whole.narrowed(s.Cat); kept.Input != whole.Input {
		t.Fatalf("a Calc reading every field narrowed the scan again to %v", kept.Input.(*ScanRel).paths)
	}
}
