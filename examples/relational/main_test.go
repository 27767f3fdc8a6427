package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// want is what the tour prints. Each section's lines were checked by hand
// against the SQL the section's doc comment states; docs/relational.md
// quotes them.
const want = `== GroupAggregate
mode [I,UB,UA,D]
+I[alice total=12 largest=12 products=1 big=1]
+I[bob total=3 largest=3 products=1 big=0]
-U[alice total=12 largest=12 products=1 big=1]
+U[alice total=17 largest=12 products=2 big=1]
-U[alice total=17 largest=12 products=2 big=1]
+U[alice total=5 largest=5 products=1 big=0]
-U[alice total=5 largest=5 products=1 big=0]
+U[alice total=9 largest=5 products=2 big=0]
-D[bob total=3 largest=3 products=1 big=0]
== MiniBatch and LocalGlobal
{about 750}
{cart 750}
{home 1500}
== Join
order 1 alice "Paris"
order 3 alice "Paris"
== TemporalJoin
payment 1 = 220 cents
payment 2 = 240 cents
payment 3 = -1 cents
== LookupJoin
+I[alice gold]
+I[bob -]
+I[alice gold]
-U[alice gold]
+U[alice gold]
-D[bob -]
== TopN
+I[{books atlas 30}]
+I[{books novel 50}]
+I[{toys ball 10}]
-D[{books atlas 30}]
+I[{books poems 40}]
-D[{books poems 40}]
+I[{books atlas 60}]
== TopNRanked
+I[{{books atlas 30} 1}]
-U[{{books atlas 30} 1}]
+U[{{books novel 50} 1}]
+I[{{books atlas 30} 2}]
+I[{{toys ball 10} 1}]
-U[{{books atlas 30} 2}]
+U[{{books poems 40} 2}]
-U[{{books novel 50} 1}]
+U[{{books atlas 60} 1}]
-U[{{books poems 40} 2}]
+U[{{books novel 50} 2}]
== Deduplicate
first +I[{books atlas 30}]
first +I[{books novel 50}]
first +I[{toys ball 10}]
first +I[{books poems 40}]
last +I[{books atlas 30}]
last +I[{books novel 50}]
last +I[{toys ball 10}]
last +I[{books poems 40}]
last +U[{books atlas 60}]
== ChangelogNormalize
+I[{alice Paris}]
-U[{alice Paris}]
+U[{alice Rome}]
+I[{bob Oslo}]
-D[{alice Rome}]
== WriteUpserts
user-stats alice: alice total=9 largest=5 products=2 big=0
latest-order alice: {1 alice book 4 0}
`

// TestRun runs the tour and compares its output with want, line by line.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out); err != nil {
		t.Fatal(err)
	}
	got, exp := strings.Split(out.String(), "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(got), len(exp)); i++ {
		var g, e string
		if i < len(got) {
			g = got[i]
		}
		if i < len(exp) {
			e = exp[i]
		}
		if g != e {
			t.Fatalf("line %d: got %q, want %q\nwhole output:\n%s", i+1, g, e, out.String())
		}
	}
}

// TestFinalTable checks the helper that turns a changelog into its table.
func TestFinalTable(t *testing.T) {
	got := finalTable(orderChanges())
	exp := []string{"{1 alice book 4 0}", "{3 alice pen 5 0}"}
	if strings.Join(got, ";") != strings.Join(exp, ";") {
		t.Fatalf("finalTable = %q, want %q", got, exp)
	}
}
