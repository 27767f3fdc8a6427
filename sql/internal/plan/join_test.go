package plan_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/connectors/all"
	"github.com/eddystream/eddy/sql/internal/plan"
)

// TestJoinPlans runs the scripts of testdata/join: "exec" runs statements
// (DDL) and prints what they show or their error; "explain" prints the
// plan of EXPLAIN of its input, or the error. Tables of the connector
// 'empty' read nothing; 'changelog-mode' = 'upsert' or 'retract' makes
// them changelogs.
func TestJoinPlans(t *testing.T) {
	datadriven.Walk(t, "testdata/join", func(t *testing.T, path string) {
		reg := connector.NewRegistry()
		for _, s := range connector.Default.Specs() {
			if s.Kind == connector.FormatKind {
				f, _ := connector.Default.Format(s.Name)
				reg.Register(f)
			} else {
				f, _ := connector.Default.Connector(s.Name)
				reg.Register(f)
			}
		}
		reg.Register(emptyFactory{})
		s := &plan.Script{Cat: plan.NewCatalog(reg)}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			src := d.Input
			switch d.Cmd {
			case "exec":
			case "explain":
				src = "EXPLAIN " + src
			default:
				d.Fatalf(t, "unknown command %s", d.Cmd)
			}
			rs, err := s.Exec(src)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			var out strings.Builder
			for _, r := range rs {
				out.WriteString(r.Text)
			}
			if out.Len() == 0 {
				return "ok\n"
			}
			return out.String()
		})
	})
}

// emptyFactory makes sources of tables that read no rows.
type emptyFactory struct{}

func (emptyFactory) Spec() connector.Spec {
	return connector.Spec{Name: "empty", Kind: connector.SourceKind, Description: "test source of no rows",
		Options: []connector.Option{{Key: "changelog-mode", Type: connector.String, Default: "insert-only", Description: "insert-only, upsert or retract"}}}
}

func (emptyFactory) NewSource(ctx connector.Context) (any, error) {
	switch ctx.Options.String("changelog-mode") {
	case "upsert":
		return modeSource{changelog.Upsert}, nil
	case "retract":
		return modeSource{changelog.Retract}, nil
	}
	return emptySource{}, nil
}

type emptySource struct{}

func (emptySource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) { return nil, nil })
}

func (emptySource) NewReader(connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	return emptyReader{}, nil
}

type modeSource struct{ mode changelog.Mode }

func (m modeSource) ChangelogMode() changelog.Mode { return m.mode }

func (modeSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return emptySource{}.NewEnumerator(ctx, restored)
}

func (modeSource) NewReader(connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	return emptyReader{}, nil
}

type emptyReader struct{}

func (emptyReader) AddSplits([]connector.Split) error                  { return nil }
func (emptyReader) Read(connector.Output[connector.TableRecord]) error { return nil }
func (emptyReader) SnapshotState(int64) ([]connector.Split, error)     { return nil, nil }
func (emptyReader) Close() error                                       { return nil }
