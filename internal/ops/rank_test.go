package ops

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/internal/ops/opstest"
	"github.com/eddystream/eddy/internal/runtime"
)

// TestRelationalDataDriven runs the scripts in reltestdata, which drive the
// top-N, deduplication, changelog normalisation, filter and upsert
// materializer operators. They live apart from testdata, whose walker knows other
// commands. Rewrite the expected output with
//
//	go test ./internal/ops -run TestRelationalDataDriven -rewrite
//
// and read the diff: expected outputs are derived from the semantics, not
// from what the code prints.
//
// Commands:
//
//	new-topn n=N [ranked] [retract] [prefix=N] [ttl=MS]
//	new-dedup keep=first|last time=proc|event [upsert] [ttl=MS]
//	new-normalize [ttl=MS]
//	new-upsert-materialize [ttl=MS]
//	new-filter-rows least=N [upsert]   (keeps rows with V >= N)
//	input [batch]
//	state
//
// A record line is "P TS [v=V] KIND [TAG]": a change of kind KIND (+I, -U,
// +U, -D) of the row (P, V, TAG), at timestamp TS. The operators key rows by
// P: the partition of the top-N, the key of the others. Rows print as
// "P=V TAG", ranked rows with " #RANK". After an input, a line
// "retractions-without-state N" reports a change of that count.
func TestRelationalDataDriven(t *testing.T) {
	datadriven.Walk(t, "reltestdata", func(t *testing.T, path string) {
		var h *opstest.Harness
		absent := int64(0)
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			if strings.HasPrefix(td.Cmd, "new-") {
				var err error
				if h, err = newRelHarness(td); err != nil {
					return "error: " + err.Error() + "\n"
				}
				absent = 0
				return "ok\n"
			}
			if h == nil {
				td.Fatalf(t, "%s before new-*", td.Cmd)
			}
			switch td.Cmd {
			case "input":
				out := h.Run(td.Input, td.HasArg("batch"))
				if n := h.Context().Metrics.RetractionsWithoutState.Load(); n != absent {
					absent = n
					out = strings.TrimSuffix(out, "ok\n") + fmt.Sprintf("retractions-without-state %d\n", n)
				}
				return out
			case "state":
				return h.State() + "\n"
			}
			td.Fatalf(t, "unknown command %q", td.Cmd)
			return ""
		})
	})
}

// relRow is the row of the scripts.
type relRow struct {
	P   string
	V   int64
	Tag string
}

func (r relRow) String() string {
	if r.Tag != "" {
		return fmt.Sprintf("%s=%d %s", r.P, r.V, r.Tag)
	}
	return fmt.Sprintf("%s=%d", r.P, r.V)
}

type rankedRow struct {
	Row  relRow
	Rank int64
}

func (r rankedRow) String() string { return fmt.Sprintf("%v #%d", r.Row, r.Rank) }

// changeInput turns the harness's records into changes of relRow.
type changeInput struct {
	in  runtime.Input[changelog.Change[relRow]]
	buf *runtime.Batch[changelog.Change[relRow]]
}

func (c *changeInput) ProcessBatch(b *runtime.Batch[opstest.Record]) error {
	c.buf.Reset()
	for i, r := range b.Data {
		f := strings.Fields(r.Op)
		if len(f) == 0 || len(f) > 2 {
			return fmt.Errorf("record %v: want a kind (+I, -U, +U, -D) and an optional tag", r)
		}
		k, err := changelog.ParseKind(f[0])
		if err != nil {
			return err
		}
		row := relRow{P: r.Key, V: r.Val}
		if len(f) == 2 {
			row.Tag = f[1]
		}
		c.buf.Append(changelog.Of(k, row), b.TS[i])
	}
	return c.in.ProcessBatch(c.buf)
}

func (c *changeInput) ProcessWatermark(wm int64) error { return c.in.ProcessWatermark(wm) }
func (c *changeInput) EndInput() error                 { return c.in.EndInput() }

func relKey() KeySpec[string, changelog.Change[relRow]] {
	spec, err := NewKeySpec(func(c changelog.Change[relRow]) string { return c.Row.P })
	if err != nil {
		panic(err)
	}
	return spec
}

func newRelHarness(td *datadriven.TestData) (*opstest.Harness, error) {
	a := argsOf(td)
	ms, err := a.int("ttl", 0)
	if err != nil {
		return nil, err
	}
	ttl := time.Duration(ms) * time.Millisecond
	h := opstest.New(strings.TrimPrefix(td.Cmd, "new-"))
	var in runtime.Input[changelog.Change[relRow]]
	switch td.Cmd {
	case "new-topn":
		n, err := a.int("n", 1)
		if err != nil {
			return nil, err
		}
		prefix, err := a.int("prefix", 0)
		if err != nil {
			return nil, err
		}
		less := func(x, y relRow) bool { return x.V < y.V }
		if a.has("ranked") {
			opstest.Output[changelog.Change[rankedRow]](h, "", nil)
			in, err = NewRank(h.Context(), relKey(), h.Backend, RankLogic[relRow, rankedRow]{
				N: int(n), Less: less, Numbered: true, Retracting: a.has("retract"), TTL: ttl, Prefix: int(prefix),
				Row: func(r relRow, rank int64) rankedRow { return rankedRow{r, rank} },
			}, h.Outputs())
		} else {
			opstest.Output[changelog.Change[relRow]](h, "", nil)
			in, err = NewRank(h.Context(), relKey(), h.Backend, RankLogic[relRow, relRow]{
				N: int(n), Less: less, Retracting: a.has("retract"), TTL: ttl, Prefix: int(prefix),
				Row: func(r relRow, _ int64) relRow { return r },
			}, h.Outputs())
		}
		if err != nil {
			return nil, err
		}
	case "new-dedup":
		opstest.Output[changelog.Change[relRow]](h, "", nil)
		logic := DedupLogic{KeepLast: a["keep"] == "last", EventTime: a["time"] == "event", Upsert: a.has("upsert"), TTL: ttl}
		d, err := NewDedup(h.Context(), relKey(), h.Backend, logic, h.Outputs())
		if err != nil {
			return nil, err
		}
		if d.timers != nil {
			h.Timers = d.timers.Len
		}
		in = d
	case "new-normalize":
		opstest.Output[changelog.Change[relRow]](h, "", nil)
		if in, err = NewNormalize(h.Context(), relKey(), h.Backend, NormalizeLogic[relRow]{
			Equal: func(x, y relRow) bool { return x == y }, TTL: ttl,
		}, h.Outputs()); err != nil {
			return nil, err
		}
	case "new-filter-rows":
		least, err := a.int("least", 0)
		if err != nil {
			return nil, err
		}
		mode := changelog.Retract
		if a.has("upsert") {
			mode = changelog.Upsert
		}
		in = NewFilterRows(func(r relRow) bool { return r.V >= least }, mode, opstest.Output[changelog.Change[relRow]](h, "", nil))
	case "new-upsert-materialize":
		opstest.Output[changelog.Change[relRow]](h, "", nil)
		if in, err = NewUpsertMaterialize(h.Context(), relKey(), h.Backend, UpsertMaterializeLogic[relRow]{
			Equal: func(x, y relRow) bool { return x == y }, TTL: ttl,
		}, h.Outputs()); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown command %q", td.Cmd)
	}
	adapter := &changeInput{in: in, buf: runtime.NewBatch[changelog.Change[relRow]](0)}
	return h, h.Start(&runtime.Built{Inputs: []any{runtime.Input[opstest.Record](adapter)}})
}
