package plan

// asBuilt rewrites the Calcs of the plans under roots in place into the
// form CalcRel.build gives them, so that EXPLAIN shows the operators a
// job runs: each Calc fused with the Calcs under it (fusedChain), narrowed
// into its scan (pushProjection), and over a regular join only it reads,
// with the join pruned to the columns read (prunedJoin). The Calcs the
// pruning puts over the join's inputs are rewritten in turn. It runs on
// plans that are only shown: a job's plans are rewritten as they are
// built.
func asBuilt(roots []Rel, cat *Catalog) {
	u := newReuse(cat)
	counts := u.readers(roots)
	readers := func(r Rel) int { return counts[u.key(r)] }
	walkRels(roots, func(r Rel) bool {
		c, ok := r.(*CalcRel)
		if !ok {
			return true
		}
		f, chain := c.fusedChain()
		alone := readers(f.Input) == 1
		for _, ic := range chain {
			alone = alone && readers(ic) <= 1
		}
		if alone {
			f = f.narrowed(cat)
		}
		*c = *f.prunedJoin(alone)
		return true
	})
}
