package plan

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// reuseCorpus plans the queries of reuseQueries: a catalog with the tables
// they read.
func reuseCorpus(t *testing.T) *Script {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dim.csv"), []byte("1,a\n2,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := connector.NewRegistry()
	for _, sp := range connector.Default.Specs() {
		if sp.Kind == connector.FormatKind {
			f, _ := connector.Default.Format(sp.Name)
			reg.Register(f)
		} else {
			f, _ := connector.Default.Connector(sp.Name)
			reg.Register(f)
		}
	}
	reg.Register(upsertsFactory{})
	s := &Script{Cat: NewCatalog(reg), QueryOutput: func(int, *types.RowType) func(Rec) error { return func(Rec) error { return nil } }}
	_, err := s.Exec(fmt.Sprintf(`
CREATE TABLE datagen (
    event_type int,
    auction ROW<id BIGINT, itemName VARCHAR, initialBid BIGINT, reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT>,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, dateTime TIMESTAMP(3)>,
    dateTime AS CASE WHEN event_type = 1 THEN auction.dateTime ELSE bid.dateTime END,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'events.num' = '1000');
CREATE VIEW bid AS SELECT bid.auction, bid.bidder, bid.price, bid.channel, dateTime FROM datagen WHERE event_type = 2;
CREATE VIEW auction AS SELECT auction.id, auction.seller, auction.category, dateTime FROM datagen WHERE event_type = 1;
CREATE TABLE O (id BIGINT, k BIGINT, ts TIMESTAMP(3), p AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE V (k BIGINT NOT NULL, rate BIGINT, ts TIMESTAMP(3), PRIMARY KEY (k) NOT ENFORCED, WATERMARK FOR ts AS ts)
  WITH ('connector' = 'upserts');
CREATE TABLE dim (key BIGINT, v VARCHAR) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE edges (src BIGINT, dst INT, label STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE a (k BIGINT, v STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE b (k INT, v STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
`, filepath.Join(dir, "dim.csv")))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// upsertsFactory makes the sources of 'upserts' tables: upsert changelogs
// of no rows, the versioned tables of temporal joins.
type upsertsFactory struct{}

func (upsertsFactory) Spec() connector.Spec {
	return connector.Spec{Name: "upserts", Kind: connector.SourceKind, Description: "test upsert source of no rows"}
}

func (upsertsFactory) NewSource(connector.Context) (any, error) { return upsertsSource{}, nil }

type upsertsSource struct{}

func (upsertsSource) ChangelogMode() changelog.Mode { return changelog.Upsert }

func (upsertsSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) { return nil, nil })
}

func (upsertsSource) NewReader(connector.ReaderContext) (connector.Reader[connector.TableRecord], error) {
	return upsertsReader{}, nil
}

type upsertsReader struct{}

func (upsertsReader) AddSplits([]connector.Split) error                  { return nil }
func (upsertsReader) Read(connector.Output[connector.TableRecord]) error { return nil }
func (upsertsReader) SnapshotState(int64) ([]connector.Split, error)     { return nil, nil }
func (upsertsReader) Close() error                                       { return nil }

// reuseQueries are queries that plan into every kind of relation.
var reuseQueries = []string{
	"SELECT auction, price * 2 AS p FROM bid WHERE price > 10",
	"SELECT auction, COUNT(*), SUM(price) FROM bid GROUP BY auction",
	"SELECT DISTINCT auction, bidder FROM bid",
	"SELECT B.auction, A.seller FROM bid B JOIN auction A ON B.auction = A.id AND B.dateTime BETWEEN A.dateTime AND A.dateTime + INTERVAL '1' MINUTE",
	"SELECT B.auction, A.seller FROM bid B LEFT JOIN auction A ON B.auction = A.id AND B.price > A.category",
	"SELECT O.id, V.rate FROM O LEFT JOIN V FOR SYSTEM_TIME AS OF O.ts ON O.k = V.k",
	"SELECT O.id, D.v FROM O JOIN dim FOR SYSTEM_TIME AS OF O.p AS D ON O.k = D.key",
	"SELECT auction, dateTime, SUM(price) OVER (PARTITION BY auction ORDER BY dateTime) AS total FROM bid",
	"SELECT * FROM (SELECT auction, bidder, price, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bid) WHERE rn <= 3",
	"SELECT auction, bidder FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY dateTime) AS rn FROM bid) WHERE rn = 1",
	"SELECT * FROM (SELECT auction, price, window_start, window_end, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rn FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))) WHERE rn <= 3",
	"SELECT bidder, price FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, bidder ORDER BY dateTime DESC) AS rn FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))) WHERE rn = 1",
	"SELECT auction FROM bid UNION ALL SELECT id FROM auction",
	"SELECT k, v FROM a INTERSECT ALL SELECT k, v FROM b",
	"SELECT A.id FROM auction A WHERE A.seller IN (SELECT B.bidder FROM bid B WHERE B.price > A.category)",
	"SELECT * FROM TABLE(TRIEST(TABLE edges, DESCRIPTOR(src), DESCRIPTOR(dst), 1000))",
	"SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS t(x, y)",
	"SELECT auction, window_start FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))",
	"SELECT auction, price, dateTime FROM bid ORDER BY dateTime, price DESC",
	"SELECT auction, COUNT(*) AS n, window_start FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) GROUP BY auction, window_start, window_end",
	`SELECT L.auction, R.seller FROM
  (SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))) L
  JOIN (SELECT * FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))) R
  ON L.auction = R.id AND L.window_start = R.window_start AND L.window_end = R.window_end`,
}

// relTypes are the relations of the package, as they build (see
// TestDigestSeesEveryRelation).
var relTypes = []Rel{
	&CalcRel{}, &ScanRel{}, &AggregateRel{}, &DistinctRel{}, &IntervalJoinRel{}, &RegularJoinRel{},
	&TemporalJoinRel{}, &LookupJoinRel{}, &lateSourceRel{}, &OverAggregateRel{}, &RankRel{}, &DedupRel{},
	&WindowRankRel{}, &WindowDedupRel{}, &UnionRel{}, &ReplicateRowsRel{}, &SinkRel{}, &SubqueryJoinRel{},
	&TriestRel{}, &ValuesRel{}, &WindowTVFRel{}, &WindowAggregateRel{}, &WindowJoinRel{}, &TemporalSortRel{},
}

// ownTypes are the relations that are never merged, whatever their fields.
var ownTypes = map[string]bool{"SinkRel": true, "lateSourceRel": true}

func typeName(r Rel) string { return reflect.TypeOf(r).Elem().Name() }

// TestReuseEveryRelation plans each query of reuseQueries twice, as two
// queries of one job: the two plans, made apart, must have one key (their
// every relation digested equal), every relation of the package but those
// never merged must occur, and no relation may be its own (a field the
// digest cannot compare). The digests must not change when the job is
// built (no field is filled in as it builds).
func TestReuseEveryRelation(t *testing.T) {
	s := reuseCorpus(t)
	seen := map[string]bool{}
	for _, q := range reuseQueries {
		s.Queries = nil
		if _, err := s.Exec(q + ";\n" + q + ";"); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		s.prepare(s.Queries)
		u := newReuse(s.Cat)
		if a, b := u.key(s.Queries[0]), u.key(s.Queries[1]); a != b {
			t.Errorf("%s: planned twice, the plans have keys %d and %d, want one", q, a, b)
		}
		before := map[Rel]string{}
		walkRels(s.Queries, func(r Rel) bool {
			seen[typeName(r)] = true
			text, own := newDigester().digest(r)
			if own != "" {
				t.Errorf("%s: %s is its own: %s", q, typeName(r), own)
			}
			before[r] = text
			return true
		})
		if err := s.Build(eddy.NewEnvironment()); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		walkRels(s.Queries, func(r Rel) bool {
			if text, _ := newDigester().digest(r); text != before[r] {
				t.Errorf("%s: the digest of %s changed as the job was built:\n%s\nto\n%s", q, typeName(r), before[r], text)
			}
			return true
		})
	}
	for _, r := range relTypes {
		if n := typeName(r); !seen[n] && !ownTypes[n] {
			t.Errorf("no query of reuseQueries plans a %s", n)
		}
	}
}

// TestDigestReadsEveryField changes, in every relation the queries of
// reuseQueries plan, each field of a number, a boolean or a string (those
// Describe may not print: a Calc's rowtime column, a join's time columns,
// a window's bounds): the digest must change with it.
func TestDigestReadsEveryField(t *testing.T) {
	s := reuseCorpus(t)
	changed := map[string]bool{}
	for _, q := range reuseQueries {
		s.Queries = nil
		if _, err := s.Exec(q + ";"); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		s.prepare(s.Queries)
		walkRels(s.Queries, func(r Rel) bool {
			want, _ := newDigester().digest(r)
			v := reflect.ValueOf(r).Elem()
			for i := 0; i < v.NumField(); i++ {
				f := v.Type().Field(i)
				if _, skipped := skipFields[v.Type().Name()][f.Name]; skipped {
					continue
				}
				cp := reflect.New(v.Type())
				cp.Elem().Set(v)
				field := reflect.NewAt(f.Type, unsafe.Pointer(cp.Elem().Field(i).UnsafeAddr())).Elem()
				switch field.Kind() {
				case reflect.Bool:
					field.SetBool(!field.Bool())
				case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
					field.SetInt(field.Int() + 1)
				case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
					field.SetUint(field.Uint() + 1)
				case reflect.String:
					field.SetString(field.String() + "x")
				default:
					continue
				}
				var got string
				func() {
					defer func() {
						if recover() != nil {
							got = "" // the changed field does not even describe: it matters
						}
					}()
					got, _ = newDigester().digest(cp.Interface().(Rel))
				}()
				if got == want {
					t.Errorf("%s: changing %s.%s leaves its digest as it was", q, v.Type().Name(), f.Name)
				}
				changed[v.Type().Name()+"."+f.Name] = true
			}
			return true
		})
	}
	// Fields EXPLAIN does not print, among those changed.
	for _, f := range []string{"CalcRel.rowtime", "IntervalJoinRel.lower", "WindowTVFRel.TimeCol", "WindowAggregateRel.Keys", "OverAggregateRel.EventTime"} {
		if !changed[f] {
			t.Errorf("no relation of the queries has the field %s changed", f)
		}
	}
}

// TestDigestSeesEveryRelation audits the relations' fields: relTypes must
// hold every type of the package that builds, the fields skipFields and
// relFields name must exist, and no field (but those skipped) may hold a
// func or a channel, which digests cannot compare (a relation holding one
// would never be merged): a field added to a relation is digested, or this
// test says to add it to skipFields with the reason.
func TestDigestSeesEveryRelation(t *testing.T) {
	built := buildingTypes(t)
	var listed []string
	for _, r := range relTypes {
		listed = append(listed, typeName(r))
	}
	sort.Strings(listed)
	if !slices.Equal(listed, built) {
		t.Errorf("relTypes has %v, but the types that build are %v", listed, built)
	}
	for _, r := range relTypes {
		rt := reflect.TypeOf(r).Elem()
		for name := range skipFields[rt.Name()] {
			if _, ok := rt.FieldByName(name); !ok {
				t.Errorf("skipFields names %s.%s, which does not exist", rt.Name(), name)
			}
		}
		for name := range relFields[rt.Name()] {
			if _, ok := rt.FieldByName(name); !ok {
				t.Errorf("relFields names %s.%s, which does not exist", rt.Name(), name)
			}
		}
		if ownTypes[rt.Name()] {
			continue
		}
		for i := 0; i < rt.NumField(); i++ {
			f := rt.Field(i)
			if _, skipped := skipFields[rt.Name()][f.Name]; skipped {
				continue
			}
			if where := uncomparable(f.Type, rt.Name()+"."+f.Name, map[reflect.Type]bool{}); where != "" {
				t.Errorf("%s holds a func or a channel, which digests cannot compare: skip the field in skipFields if it is derived from others, or digest what it stands for", where)
			}
		}
	}
}

// uncomparable returns where a value of type t holds a func or a channel
// (not through an interface, a relation or what digests leave out), "" if
// nowhere.
func uncomparable(t reflect.Type, where string, seen map[reflect.Type]bool) string {
	if seen[t] {
		return ""
	}
	seen[t] = true
	if t.Implements(relType) || t == funcPtrType || t == catalogType || t == posType || t.PkgPath() == "sync" {
		return ""
	}
	switch t.Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return where
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return uncomparable(t.Elem(), where, seen)
	case reflect.Map:
		if w := uncomparable(t.Key(), where, seen); w != "" {
			return w
		}
		return uncomparable(t.Elem(), where, seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if w := uncomparable(f.Type, where+"."+f.Name, seen); w != "" {
				return w
			}
		}
	}
	return ""
}

// buildingTypes returns the types of the package's files with a build
// method (a relation), sorted.
func buildingTypes(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Name.Name != "build" || fd.Recv == nil || len(fd.Recv.List) != 1 || fd.Type.Params.NumFields() != 1 {
				continue
			}
			if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok {
					out = append(out, id.Name)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestReuseTableRecreated plans two INSERTs of one job reading a table t,
// dropped and created again with another column type between them: the
// scans print the same line, but read different tables, and must not be
// merged.
func TestReuseTableRecreated(t *testing.T) {
	s := &Script{Cat: NewCatalog(nil)}
	_, err := s.Exec(`
CREATE TABLE s1 (x BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE s2 (x BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE t (x INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
INSERT INTO s1 SELECT x FROM t;
DROP TABLE t;
CREATE TABLE t (x BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
INSERT INTO s2 SELECT x FROM t;
`)
	if err != nil {
		t.Fatal(err)
	}
	roots := []Rel{s.Inserts[0], s.Inserts[1]}
	s.prepare(roots)
	var scans []*ScanRel
	walkRels(roots, func(r Rel) bool {
		if sc, ok := r.(*ScanRel); ok {
			scans = append(scans, sc)
		}
		return true
	})
	if len(scans) != 2 {
		t.Fatalf("the INSERTs read %d scans, want 2", len(scans))
	}
	if a, b := scans[0].Describe(), scans[1].Describe(); a != b {
		t.Fatalf("the scans print %q and %q; the test wants them printed alike", a, b)
	}
	u := newReuse(s.Cat)
	if u.key(scans[0]) == u.key(scans[1]) {
		t.Errorf("the scans of t as INT and of t as BIGINT have one key: %s", scans[0].Describe())
	}
	if err := s.Build(eddy.NewEnvironment()); err != nil {
		t.Fatal(err)
	}
}

// TestLateRowsNotMerged plans two equal window aggregations that write
// their late rows into a table: each writes its own (merged, the table
// would get each late row once instead of twice), so neither is merged.
func TestLateRowsNotMerged(t *testing.T) {
	s := reuseCorpus(t)
	q := `SELECT /*+ LATE_ROWS('late') */ auction, COUNT(*) AS n, window_start FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND)) GROUP BY auction, window_start, window_end`
	if _, err := s.Exec("CREATE TABLE late (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, dateTime TIMESTAMP(3)) WITH ('connector' = 'blackhole');\n" + q + ";\n" + q + ";"); err != nil {
		t.Fatal(err)
	}
	s.prepare(s.Queries)
	u := newReuse(s.Cat)
	var aggs []Rel
	walkRels(s.Queries, func(r Rel) bool {
		if w, ok := r.(*WindowAggregateRel); ok && w.late != nil {
			aggs = append(aggs, r)
		}
		return true
	})
	if len(aggs) != 2 {
		t.Fatalf("the queries plan %d window aggregations with late rows, want 2", len(aggs))
	}
	if u.key(aggs[0]) == u.key(aggs[1]) {
		t.Error("two window aggregations writing late rows into one table have one key")
	}
	if u.key(s.Queries[0]) == u.key(s.Queries[1]) {
		t.Error("two queries over window aggregations writing late rows have one key")
	}
}
