package agg

// Tuple2 is the accumulator of Combine2: the accumulators of its parts.
type Tuple2[A, B any] struct {
	A A
	B B
}

// Tuple3 is the accumulator of Combine3.
type Tuple3[A, B, C any] struct {
	A A
	B B
	C C
}

// Tuple4 is the accumulator of Combine4.
type Tuple4[A, B, C, D any] struct {
	A A
	B B
	C C
	D D
}

// part is one function of a combination, with its accumulator reached
// through get and set.
type part[IN, T any] struct {
	create   func(t *T)
	add      func(t *T, in IN)
	merge    func(t *T, o T)
	retract  func(t *T, in IN)
	addW     func(t *T, in IN, v Views, first int)
	retractW func(t *T, in IN, v Views, first int)
	views    int
	canR     bool
}

func partOf[IN, ACC, OUT, T any](f Function[IN, ACC, OUT], acc func(t *T) *ACC) part[IN, T] {
	return part[IN, T]{
		create: func(t *T) { *acc(t) = f.Create() },
		add:    func(t *T, in IN) { a := acc(t); *a = f.Add(*a, in) },
		merge:  func(t *T, o T) { a := acc(t); *a = f.Merge(*a, *acc(&o)) },
		retract: func(t *T, in IN) {
			a := acc(t)
			*a = retractWith(f, *a, in, nil, 0)
		},
		addW:     func(t *T, in IN, v Views, first int) { a := acc(t); *a = addWith(f, *a, in, v, first) },
		retractW: func(t *T, in IN, v Views, first int) { a := acc(t); *a = retractWith(f, *a, in, v, first) },
		views:    NumViews(f),
		canR:     CanRetract(f),
	}
}

// combined runs the parts of a combination over one accumulator type.
type combined[IN, T, OUT any] struct {
	parts  []part[IN, T]
	result func(T) OUT
}

func (c combined[IN, T, OUT]) Create() T {
	var t T
	for _, p := range c.parts {
		p.create(&t)
	}
	return t
}

func (c combined[IN, T, OUT]) Add(t T, in IN) T {
	for _, p := range c.parts {
		p.add(&t, in)
	}
	return t
}

func (c combined[IN, T, OUT]) Merge(a, b T) T {
	for _, p := range c.parts {
		p.merge(&a, b)
	}
	return a
}

func (c combined[IN, T, OUT]) Result(t T) OUT { return c.result(t) }

// Retract takes in out of every part. It panics if a part cannot retract;
// CanRetract says whether all can.
func (c combined[IN, T, OUT]) Retract(t T, in IN) T {
	for _, p := range c.parts {
		p.retract(&t, in)
	}
	return t
}

// CanRetract reports whether every part can retract.
func (c combined[IN, T, OUT]) CanRetract() bool {
	for _, p := range c.parts {
		if !p.canR {
			return false
		}
	}
	return true
}

// NumViews returns the views of all parts.
func (c combined[IN, T, OUT]) NumViews() int {
	n := 0
	for _, p := range c.parts {
		n += p.views
	}
	return n
}

func (c combined[IN, T, OUT]) AddWith(t T, in IN, v Views, first int) T {
	for _, p := range c.parts {
		p.addW(&t, in, v, first)
		first += p.views
	}
	return t
}

func (c combined[IN, T, OUT]) RetractWith(t T, in IN, v Views, first int) T {
	for _, p := range c.parts {
		p.retractW(&t, in, v, first)
		first += p.views
	}
	return t
}

// CombinedFunction is what the Combine functions return: an aggregate
// function over several, that retracts if they all do and passes views on
// to those that use them.
type CombinedFunction[IN, ACC, OUT any] interface {
	ViewFunction[IN, ACC, OUT]
	Retracting[IN, ACC]
	// CanRetract reports whether every combined function can retract.
	CanRetract() bool
}

// Combine2 aggregates with f1 and f2 at once, as the aggregate calls of one
// SELECT do, and makes the result of theirs with result.
func Combine2[IN, A1, O1, A2, O2, OUT any](f1 Function[IN, A1, O1], f2 Function[IN, A2, O2], result func(O1, O2) OUT) CombinedFunction[IN, Tuple2[A1, A2], OUT] {
	type T = Tuple2[A1, A2]
	return combined[IN, T, OUT]{
		parts: []part[IN, T]{
			partOf(f1, func(t *T) *A1 { return &t.A }),
			partOf(f2, func(t *T) *A2 { return &t.B }),
		},
		result: func(t T) OUT { return result(f1.Result(t.A), f2.Result(t.B)) },
	}
}

// Combine3 aggregates with three functions at once; see Combine2.
func Combine3[IN, A1, O1, A2, O2, A3, O3, OUT any](f1 Function[IN, A1, O1], f2 Function[IN, A2, O2], f3 Function[IN, A3, O3], result func(O1, O2, O3) OUT) CombinedFunction[IN, Tuple3[A1, A2, A3], OUT] {
	type T = Tuple3[A1, A2, A3]
	return combined[IN, T, OUT]{
		parts: []part[IN, T]{
			partOf(f1, func(t *T) *A1 { return &t.A }),
			partOf(f2, func(t *T) *A2 { return &t.B }),
			partOf(f3, func(t *T) *A3 { return &t.C }),
		},
		result: func(t T) OUT { return result(f1.Result(t.A), f2.Result(t.B), f3.Result(t.C)) },
	}
}

// Combine4 aggregates with four functions at once; see Combine2.
func Combine4[IN, A1, O1, A2, O2, A3, O3, A4, O4, OUT any](f1 Function[IN, A1, O1], f2 Function[IN, A2, O2], f3 Function[IN, A3, O3], f4 Function[IN, A4, O4], result func(O1, O2, O3, O4) OUT) CombinedFunction[IN, Tuple4[A1, A2, A3, A4], OUT] {
	type T = Tuple4[A1, A2, A3, A4]
	return combined[IN, T, OUT]{
		parts: []part[IN, T]{
			partOf(f1, func(t *T) *A1 { return &t.A }),
			partOf(f2, func(t *T) *A2 { return &t.B }),
			partOf(f3, func(t *T) *A3 { return &t.C }),
			partOf(f4, func(t *T) *A4 { return &t.D }),
		},
		result: func(t T) OUT { return result(f1.Result(t.A), f2.Result(t.B), f3.Result(t.C), f4.Result(t.D)) },
	}
}
