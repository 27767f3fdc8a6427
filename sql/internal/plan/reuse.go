package plan

import (
	"fmt"
	"strings"
)

// Sub-plan reuse, as Flink's planner does it: relations of the plans of
// one job (the INSERTs of a statement set, the bare queries of a script,
// the branches of one query) that compute the same changelog (equal
// digests, digest.go) are built once, as one chain of operators whose
// output every reader reads. Two settings turn it off:
//
//	SET 'table.optimizer.reuse-sub-plan-enabled' = 'false';
//	SET 'table.optimizer.reuse-source-enabled' = 'false';
//
// The first keeps every relation but the scans apart; the second keeps
// the scans apart: each then opens a source of its own, and a Calc that is
// a table's only reader runs in its source. Unlike Flink, where reusing
// sources needs sub-plan reuse on, the two are independent. EXPLAIN shows
// a relation read more than once with ", reuse_id=[n]" at the end of its
// line, and every other place that reads it as Reused(reference_id=[n]).

// The settings of sub-plan reuse.
const (
	reuseSubPlanSetting = "table.optimizer.reuse-sub-plan-enabled"
	reuseSourceSetting  = "table.optimizer.reuse-source-enabled"
)

// reuse gives every relation of the plans of a job its key: relations
// with one key are built once.
type reuse struct {
	d *digester
	// subPlan and source say whether relations that are not scans, and
	// scans, are merged with those of equal digests.
	subPlan, source bool
	keys            map[Rel]int
}

func newReuse(cat *Catalog) *reuse {
	return &reuse{d: newDigester(), subPlan: settingOn(cat, reuseSubPlanSetting), source: settingOn(cat, reuseSourceSetting), keys: map[Rel]int{}}
}

// settingOn tells whether a boolean setting that is on by default is on:
// only 'false' turns it off.
func settingOn(cat *Catalog, key string) bool {
	v, ok := cat.Settings[key]
	return !ok || !strings.EqualFold(strings.TrimSpace(v), "false")
}

// key returns the key of r: its digest's id where reuse merges relations
// of its kind, else an id of its own (r is then built once, shared by the
// relations that hold it, as a view read twice by one pointer).
func (u *reuse) key(r Rel) int {
	if k, ok := u.keys[r]; ok {
		return k
	}
	_, scan := r.(*ScanRel)
	var k int
	if scan && u.source || !scan && u.subPlan {
		k = u.d.id(r)
	} else {
		k = u.d.identity()
	}
	u.keys[r] = k
	return k
}

// readers counts the readers of every relation of the plans rooted at
// roots, by key: the relations (by key) that read it, each once however
// often it occurs, so that a relation read by two equal relations has one
// reader, and one read by two different relations has two.
func (u *reuse) readers(roots []Rel) map[int]int {
	out := map[int]int{}
	seen := map[int]bool{}
	var walk func(r Rel)
	walk = func(r Rel) {
		k := u.key(r)
		if seen[k] {
			return
		}
		seen[k] = true
		for _, in := range r.Inputs() {
			out[u.key(in)]++
			walk(in)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return out
}

// explainPlans renders the plans rooted at roots as indented trees, one
// operator a line with its changelog mode and, when par holds the
// operator, the number of parallel subtasks it runs with (see
// Script.parallelisms). A relation read more than once (by key) is shown
// in full where it first occurs, its line ending in ", reuse_id=[n]", and
// as Reused(reference_id=[n]) wherever else it is read, as Flink shows
// reused sub-plans.
func explainPlans(roots []Rel, par map[Rel]int, u *reuse) string {
	refs := u.readers(roots)
	for _, r := range roots {
		refs[u.key(r)]++
	}
	ids := map[int]int{}
	var sb strings.Builder
	var walk func(r Rel, depth int)
	walk = func(r Rel, depth int) {
		indent := strings.Repeat("   ", depth) + "+- "
		k := u.key(r)
		if id, ok := ids[k]; ok {
			fmt.Fprintf(&sb, "%sReused(reference_id=[%d])\n", indent, id)
			return
		}
		p := r.Props()
		fmt.Fprintf(&sb, "%s%s, changelogMode=%s", indent, r.Describe(), modeString(p.Mode))
		if n, ok := par[r]; ok {
			fmt.Fprintf(&sb, ", parallelism=%d", n)
		}
		if refs[k] > 1 {
			ids[k] = len(ids) + 1
			fmt.Fprintf(&sb, ", reuse_id=[%d]", ids[k])
		}
		sb.WriteByte('\n')
		for _, in := range r.Inputs() {
			walk(in, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return sb.String()
}
