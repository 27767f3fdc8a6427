package eddy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// uniqueChangelog returns a valid changelog of about n changes whose table
// holds at most one row per key G in [0, groups). An insert-only one
// inserts a row for min(n, groups) keys, each once, in random order; a
// retract one also updates rows (-U, +U: in place, or to a free key) and
// deletes them.
func uniqueChangelog(rng *rand.Rand, n, groups int, insertOnly bool) []changelog.Change[relRow] {
	var out []changelog.Change[relRow]
	id := int64(0)
	row := func(g int64) relRow {
		id++
		return relRow{ID: id, G: g, V: rng.Int64N(100)}
	}
	if insertOnly {
		for _, g := range rng.Perm(groups)[:min(n, groups)] {
			out = append(out, changelog.InsertOf(row(int64(g))))
		}
		return out
	}
	live := map[int64]bool{}
	var rows []relRow // the live rows
	free := func() (int64, bool) {
		for range 10 {
			if g := rng.Int64N(int64(groups)); !live[g] {
				return g, true
			}
		}
		return 0, false
	}
	for len(out) < n {
		p := rng.IntN(10)
		if p < 5 || len(rows) == 0 {
			if g, ok := free(); ok {
				r := row(g)
				live[g] = true
				rows = append(rows, r)
				out = append(out, changelog.InsertOf(r))
				continue
			}
			if len(rows) == 0 {
				continue
			}
		}
		i := rng.IntN(len(rows))
		old := rows[i]
		if p < 8 {
			g := old.G
			if rng.IntN(2) == 0 {
				if f, ok := free(); ok {
					g = f
				}
			}
			live[old.G] = false
			nr := row(g)
			live[g] = true
			rows[i] = nr
			out = append(out, changelog.Of(changelog.UpdateBefore, old), changelog.Of(changelog.UpdateAfter, nr))
			continue
		}
		live[old.G] = false
		rows = append(rows[:i], rows[i+1:]...)
		out = append(out, changelog.Of(changelog.Delete, old))
	}
	return out
}

// TestJoinUniqueKeyMatchesBruteForce joins random changelogs where one
// input is declared unique on the join key (JoinKeyContainsUniqueKey), as
// TestJoinMatchesBruteForce does the general join: random interleavings,
// a failure and a restore from a checkpoint in the middle, both backends,
// every join kind. The unique input is insert-only (the join keeps the
// other input's rows only until their unique row arrives) or a retract
// stream (one row per key, updated and deleted); the other input is a
// retract stream, with rows that repeat, or insert-only.
func TestJoinUniqueKeyMatchesBruteForce(t *testing.T) {
	type variant struct {
		uniqueLeft       bool // the unique input is the left one
		uniqueInsertOnly bool
		otherInsertOnly  bool
		otherDups        bool
		on               bool
	}
	variants := map[string]variant{
		"insert":          {uniqueInsertOnly: true},
		"insert-on":       {uniqueInsertOnly: true, on: true},
		"insert-both":     {uniqueInsertOnly: true, otherInsertOnly: true, on: true},
		"insert-left-dup": {uniqueLeft: true, uniqueInsertOnly: true, otherDups: true},
		"retract-on":      {on: true},
	}
	const groups = 1000
	for _, backend := range relBackends {
		for _, kind := range joinKinds {
			for vname, v := range variants {
				t.Run(fmt.Sprintf("%s/%v/%s", backend, kind, vname), func(t *testing.T) {
					t.Parallel()
					rng := rand.New(rand.NewPCG(uint64(kind)+7, uint64(len(vname))))
					unique := uniqueChangelog(rng, 2500, groups, v.uniqueInsertOnly)
					newRow := newRowIn(rng, groups)
					if v.otherDups {
						newRow = dupRowIn(rng, groups)
					}
					other := randomChangelog(rng, 2500, newRow)
					if v.otherInsertOnly {
						other = insertOnly(2500, newRow)
					}
					left, right := other, unique
					side := eddy.RightSide
					if v.uniqueLeft {
						left, right, side = unique, other, eddy.LeftSide
					}
					var on func(a, b relRow) bool
					if v.on {
						on = onCond
					}
					input := func(env *eddy.Environment, name string, rows []changelog.Change[relRow], insertOnly bool, hook func()) *eddy.KeyedStream[int64, changelog.Change[relRow]] {
						s := relInput(env, name, rows, hook)
						if insertOnly {
							s = eddy.AsChangelog(s, changelog.InsertOnly)
						}
						return eddy.GroupBy(s, func(r relRow) int64 { return r.G })
					}
					out := runRelational(t, relRun{backend: backend, failAfter: 2000, parallelism: 2},
						func(env *eddy.Environment, hook func()) *eddy.Stream[changelog.Change[joined]] {
							l := input(env, "left", left, v.uniqueInsertOnly && v.uniqueLeft || v.otherInsertOnly && !v.uniqueLeft, hook)
							r := input(env, "right", right, v.uniqueInsertOnly && !v.uniqueLeft || v.otherInsertOnly && v.uniqueLeft, hook)
							if on != nil {
								return eddy.JoinOn(l, r, kind, on, joinedOf, eddy.JoinKeyContainsUniqueKey(side))
							}
							return eddy.Join(l, r, kind, joinedOf, eddy.JoinKeyContainsUniqueKey(side))
						})
					got := finalTable(t, out)
					want := bruteJoin(table(t, left), table(t, right), kind, on)
					if d := diffTables(got, want); d != "" {
						t.Fatalf("result table differs from brute force:\n%s", d)
					}
				})
			}
		}
	}
}

// TestJoinUniqueKeyViolations checks that an input declared unique on the
// join key fails the job, with an error that names the declaration and the
// key, when it has two rows of a key, and, when it is insert-only, when it
// retracts a row.
func TestJoinUniqueKeyViolations(t *testing.T) {
	cases := []struct {
		name       string
		insertOnly bool
		rows       []changelog.Change[relRow]
		want       []string
	}{
		{"second-insert", true,
			[]changelog.Change[relRow]{changelog.InsertOf(relRow{ID: 1, G: 7}), changelog.InsertOf(relRow{ID: 2, G: 7})},
			[]string{"JoinKeyContainsUniqueKey", "key 7", "right input", "ID:1", "ID:2"}},
		{"equal-insert", false,
			[]changelog.Change[relRow]{changelog.InsertOf(relRow{ID: 1, G: 7}), changelog.InsertOf(relRow{ID: 1, G: 7})},
			[]string{"JoinKeyContainsUniqueKey", "key 7", "right input"}},
		{"retraction", true,
			[]changelog.Change[relRow]{changelog.InsertOf(relRow{ID: 1, G: 7}), changelog.Of(changelog.Delete, relRow{ID: 1, G: 7})},
			[]string{"insert-only", "key 7", "retracts", "changelog.Retract"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := eddy.NewEnvironment(eddy.WithParallelism(1))
			key := func(r relRow) int64 { return r.G }
			gen := func(rows []changelog.Change[relRow]) *eddy.Stream[changelog.Change[relRow]] {
				return eddy.FromGenerator(env, eddy.GeneratorOptions{Count: int64(len(rows))}, func(i int64) changelog.Change[relRow] { return rows[i] },
					eddy.NoWatermarks[changelog.Change[relRow]]()).Parallelism(1)
			}
			mode := changelog.Retract
			if c.insertOnly {
				mode = changelog.InsertOnly
			}
			left := eddy.AsChangelog(gen([]changelog.Change[relRow]{changelog.InsertOf(relRow{ID: 100, G: 7})}), changelog.InsertOnly)
			right := eddy.AsChangelog(gen(c.rows), mode)
			eddy.Discard(eddy.Join(eddy.GroupBy(left, key), eddy.GroupBy(right, key), eddy.InnerJoin, joinedOf, eddy.JoinKeyContainsUniqueKey(eddy.RightSide)))
			err := env.Execute(context.Background(), t.Name())
			if err == nil {
				t.Fatal("the job succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestJoinUniqueKeyOptionChecks checks that the declaration is refused
// where it means nothing: an invalid side, or an operator other than a
// join.
func TestJoinUniqueKeyOptionChecks(t *testing.T) {
	env := eddy.NewEnvironment()
	src := eddy.AsChangelog(eddy.FromGenerator(env, eddy.GeneratorOptions{Count: 1}, func(int64) changelog.Change[relRow] { return changelog.InsertOf(relRow{}) },
		eddy.NoWatermarks[changelog.Change[relRow]]()), changelog.InsertOnly)
	key := func(r relRow) int64 { return r.G }
	eddy.Discard(eddy.Join(eddy.GroupBy(src, key), eddy.GroupBy(src, key), eddy.InnerJoin, joinedOf, eddy.JoinKeyContainsUniqueKey(eddy.JoinSide(2))))
	err := env.Execute(context.Background(), t.Name())
	if err == nil || !strings.Contains(err.Error(), "JoinKeyContainsUniqueKey(JoinSide(2))") {
		t.Fatalf("got %v, want an error naming the invalid side", err)
	}
	env = eddy.NewEnvironment()
	src = eddy.AsChangelog(eddy.FromGenerator(env, eddy.GeneratorOptions{Count: 1}, func(int64) changelog.Change[relRow] { return changelog.InsertOf(relRow{}) },
		eddy.NoWatermarks[changelog.Change[relRow]]()), changelog.InsertOnly)
	eddy.Discard(eddy.TopN(eddy.GroupBy(src, key), 1, func(a, b relRow) bool { return a.V < b.V }, eddy.JoinKeyContainsUniqueKey(eddy.LeftSide)))
	err = env.Execute(context.Background(), t.Name())
	if err == nil || !strings.Contains(err.Error(), "JoinKeyContainsUniqueKey(LeftSide)") {
		t.Fatalf("got %v, want an error naming the option", err)
	}
}

// TestJoinUniqueKeyRestoreNeedsSameDeclaration checks that a savepoint of a
// join that keeps only the unmatched rows of an input does not restore into
// a join that keeps every row: the restore fails, naming the state.
func TestJoinUniqueKeyRestoreNeedsSameDeclaration(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	left := insertOnly(3000, newRowIn(rng, 100))
	right := uniqueChangelog(rng, 100, 100, true)
	build := func(env *eddy.Environment, hook func(), opts ...eddy.TableOption) {
		l := eddy.AsChangelog(relInput(env, "left", left, hook), changelog.InsertOnly)
		r := eddy.AsChangelog(relInput(env, "right", right, hook), changelog.InsertOnly)
		key := func(r relRow) int64 { return r.G }
		eddy.Discard(eddy.Join(eddy.GroupBy(l, key), eddy.GroupBy(r, key), eddy.InnerJoin, joinedOf, opts...).UID("join"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env := eddy.NewEnvironment(eddy.WithParallelism(1))
	var seen atomic.Int64
	reached := make(chan struct{})
	var once sync.Once
	build(env, func() {
		if seen.Add(1) >= 1000 {
			once.Do(func() { close(reached) })
			time.Sleep(2 * time.Millisecond)
		}
	}, eddy.JoinKeyContainsUniqueKey(eddy.RightSide))
	done := make(chan error, 1)
	go func() { done <- env.Execute(ctx, t.Name()) }()
	select {
	case <-reached:
	case err := <-done:
		t.Fatalf("the job ended before the savepoint: %v", err)
	}
	path, err := env.TriggerSavepoint(ctx, filepath.Join(t.TempDir(), "sp"), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	env = eddy.NewEnvironment(eddy.WithParallelism(1), eddy.WithRestoreFrom(path))
	build(env, func() {})
	err = env.Execute(ctx, t.Name()+"-restored")
	if err == nil || !strings.Contains(err.Error(), "join-unique-right") && !strings.Contains(err.Error(), "join-waiting-left") {
		t.Fatalf("got %v, want a restore error naming a state of the join", err)
	}
}
