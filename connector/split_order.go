package connector

// OrderedSplits is implemented by sources whose readers must read the
// splits they hold one after the other, in the order they hold them, on
// one reader: a changelog whose deletions must come before the insertions
// that follow them. eddy then keeps each reader's splits together, in
// order, in checkpoints and savepoints, and a job restored at another
// parallelism gives them to one reader (those of the first reader to the
// first reader), before any split the enumerator assigns after the
// restore.
type OrderedSplits interface {
	// KeepsSplitOrder reports whether the readers' splits must stay
	// together and in order.
	KeepsSplitOrder() bool
}
