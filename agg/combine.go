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

// CombinedFunction is what the Combine functions return: an aggregate
// function over several, that retracts if they all do and passes views on
// to those that use them.
type CombinedFunction[IN, ACC, OUT any] interface {
	ViewFunction[IN, ACC, OUT]
	Retracting[IN, ACC]
	// CanRetract reports whether every combined function can retract.
	CanRetract() bool
}

// member is one function of a combination, with what it can do resolved
// once, so that a call costs one interface call and no allocation.
type member[IN, ACC, OUT any] struct {
	f       Function[IN, ACC, OUT]
	vf      ViewFunction[IN, ACC, OUT] // nil unless f uses views
	r       Retracting[IN, ACC]        // nil if f cannot retract by itself
	views   int
	canR    bool
	hasView bool
}

func memberOf[IN, ACC, OUT any](f Function[IN, ACC, OUT]) member[IN, ACC, OUT] {
	m := member[IN, ACC, OUT]{f: f, views: NumViews(f), canR: CanRetract(f)}
	if vf, ok := f.(ViewFunction[IN, ACC, OUT]); ok {
		m.vf, m.hasView = vf, true
	}
	m.r, _ = f.(Retracting[IN, ACC])
	return m
}

func (m *member[IN, ACC, OUT]) retract(acc ACC, in IN) ACC {
	if m.r != nil {
		return m.r.Retract(acc, in)
	}
	return retractWith(m.f, acc, in, nil, 0)
}

func (m *member[IN, ACC, OUT]) addWith(acc ACC, in IN, v Views, first int) ACC {
	if m.hasView && v != nil {
		return m.vf.AddWith(acc, in, v, first)
	}
	return m.f.Add(acc, in)
}

func (m *member[IN, ACC, OUT]) retractWith(acc ACC, in IN, v Views, first int) ACC {
	if m.hasView && v != nil {
		return m.vf.RetractWith(acc, in, v, first)
	}
	return m.retract(acc, in)
}

// Combine2 aggregates with f1 and f2 at once, as the aggregate calls of one
// SELECT do, and makes the result of theirs with result.
func Combine2[IN, A1, O1, A2, O2, OUT any](f1 Function[IN, A1, O1], f2 Function[IN, A2, O2], result func(O1, O2) OUT) CombinedFunction[IN, Tuple2[A1, A2], OUT] {
	return &combine2[IN, A1, O1, A2, O2, OUT]{memberOf(f1), memberOf(f2), result}
}

type combine2[IN, A1, O1, A2, O2, OUT any] struct {
	m1     member[IN, A1, O1]
	m2     member[IN, A2, O2]
	result func(O1, O2) OUT
}

func (c *combine2[IN, A1, O1, A2, O2, OUT]) Create() Tuple2[A1, A2] {
	return Tuple2[A1, A2]{c.m1.f.Create(), c.m2.f.Create()}
}
func (c *combine2[IN, A1, O1, A2, O2, OUT]) Add(t Tuple2[A1, A2], in IN) Tuple2[A1, A2] {
	return Tuple2[A1, A2]{c.m1.f.Add(t.A, in), c.m2.f.Add(t.B, in)}
}
func (c *combine2[IN, A1, O1, A2, O2, OUT]) Merge(a, b Tuple2[A1, A2]) Tuple2[A1, A2] {
	return Tuple2[A1, A2]{c.m1.f.Merge(a.A, b.A), c.m2.f.Merge(a.B, b.B)}
}
func (c *combine2[IN, A1, O1, A2, O2, OUT]) Result(t Tuple2[A1, A2]) OUT {
	return c.result(c.m1.f.Result(t.A), c.m2.f.Result(t.B))
}

// Retract takes in out of every part; it panics if one cannot retract
// (CanRetract says whether all can).
func (c *combine2[IN, A1, O1, A2, O2, OUT]) Retract(t Tuple2[A1, A2], in IN) Tuple2[A1, A2] {
	return Tuple2[A1, A2]{c.m1.retract(t.A, in), c.m2.retract(t.B, in)}
}
func (c *combine2[IN, A1, O1, A2, O2, OUT]) CanRetract() bool { return c.m1.canR && c.m2.canR }
func (c *combine2[IN, A1, O1, A2, O2, OUT]) NumViews() int    { return c.m1.views + c.m2.views }
func (c *combine2[IN, A1, O1, A2, O2, OUT]) AddWith(t Tuple2[A1, A2], in IN, v Views, first int) Tuple2[A1, A2] {
	t.A = c.m1.addWith(t.A, in, v, first)
	t.B = c.m2.addWith(t.B, in, v, first+c.m1.views)
	return t
}
func (c *combine2[IN, A1, O1, A2, O2, OUT]) RetractWith(t Tuple2[A1, A2], in IN, v Views, first int) Tuple2[A1, A2] {
	t.A = c.m1.retractWith(t.A, in, v, first)
	t.B = c.m2.retractWith(t.B, in, v, first+c.m1.views)
	return t
}

// Combine3 aggregates with three functions at once; see Combine2.
func Combine3[IN, A1, O1, A2, O2, A3, O3, OUT any](f1 Function[IN, A1, O1], f2 Function[IN, A2, O2], f3 Function[IN, A3, O3], result func(O1, O2, O3) OUT) CombinedFunction[IN, Tuple3[A1, A2, A3], OUT] {
	return &combine3[IN, A1, O1, A2, O2, A3, O3, OUT]{memberOf(f1), memberOf(f2), memberOf(f3), result}
}

type combine3[IN, A1, O1, A2, O2, A3, O3, OUT any] struct {
	m1     member[IN, A1, O1]
	m2     member[IN, A2, O2]
	m3     member[IN, A3, O3]
	result func(O1, O2, O3) OUT
}

type t3[A, B, C any] = Tuple3[A, B, C]

func (c *combine3[IN, A1, O1, A2, O2, A3, O3, OUT]) Create() t3[A1, A2, A3] {
	return t3[A1, A2, A3]{c.m1.f.Create(), c.m2.f.Create(), c.m3.f.Create()}
}
func (c *combine3[IN, A1, O1, A2, O2, A3, O3, OUT]) Add(t t3[A1, A2, A3], in IN) t3[A1, A2, A3] {
	return t3[A1, A2, A3]{c.m1.f.Add(t.A, in), c.m2.f.Add(t.B, in), c.m3.f.Add(t.C, in)}
}
func (c *combine3[IN, A1, O1, A2, O2, A3, O3, OUT]) Merge(a, b t3[A1, A2, A3]) t3[A1, A2, A3] {
	return t3[A1, A2, A3]{c.m1.f.Merge(a.A, b.A), c.m2.f.Merge(a.B, b.B), c.m3.f.Merge(a.C, b.C)}
}
func (c *combine3[IN, A1, O1, A2, O2, A3, O3, OUT]) Result(t t3[A1, A2, A3]) OUT {
	return c.result(c.m1.f.Result(t.A), c.m2.f.Result(t.B), c.m3.f.Result(t.C))
}

// Retract takes in out of every part; see combine2.Retract.
func (c *combine3[IN, A1, O1, A2, O2, A3, O3, OUT]) Retract(t t3[A1, A2, A3], in IN) t3[A1, A2, A3] {
	return t3[A1, A2, A3]{c.m1.retract(t.A, in), c.m2.retract(t.B, in), c.m3.retract(t.C, in)}
}
func (c *combine3[IN, A1, O1, A2, O2, A3, O3, OUT]) CanRetract() bool {
	return c.m1.canR && c.m2.canR && c.m3.canR
}
func (c *combine3[IN, A1, O1, A2, O2, A3, O3, OUT]) NumViews() int {
	return c.m1.views + c.m2.views + c.m3.views
}
func (c *combine3[IN, A1, O1, A2, O2, A3, O3, OUT]) AddWith(t t3[A1, A2, A3], in IN, v Views, first int) t3[A1, A2, A3] {
	t.A = c.m1.addWith(t.A, in, v, first)
	first += c.m1.views
	t.B = c.m2.addWith(t.B, in, v, first)
	t.C = c.m3.addWith(t.C, in, v, first+c.m2.views)
	return t
}
func (c *combine3[IN, A1, O1, A2, O2, A3, O3, OUT]) RetractWith(t t3[A1, A2, A3], in IN, v Views, first int) t3[A1, A2, A3] {
	t.A = c.m1.retractWith(t.A, in, v, first)
	first += c.m1.views
	t.B = c.m2.retractWith(t.B, in, v, first)
	t.C = c.m3.retractWith(t.C, in, v, first+c.m2.views)
	return t
}

// Combine4 aggregates with four functions at once; see Combine2.
func Combine4[IN, A1, O1, A2, O2, A3, O3, A4, O4, OUT any](f1 Function[IN, A1, O1], f2 Function[IN, A2, O2], f3 Function[IN, A3, O3], f4 Function[IN, A4, O4], result func(O1, O2, O3, O4) OUT) CombinedFunction[IN, Tuple4[A1, A2, A3, A4], OUT] {
	return &combine4[IN, A1, O1, A2, O2, A3, O3, A4, O4, OUT]{memberOf(f1), memberOf(f2), memberOf(f3), memberOf(f4), result}
}

type combine4[IN, A1, O1, A2, O2, A3, O3, A4, O4, OUT any] struct {
	m1     member[IN, A1, O1]
	m2     member[IN, A2, O2]
	m3     member[IN, A3, O3]
	m4     member[IN, A4, O4]
	result func(O1, O2, O3, O4) OUT
}

type t4[A, B, C, D any] = Tuple4[A, B, C, D]

func (c *combine4[IN, A1, O1, A2, O2, A3, O3, A4, O4, OUT]) Create() t4[A1, A2, A3, A4] {
	return t4[A1, A2, A3, A4]{c.m1.f.Create(), c.m2.f.Create(), c.m3.f.Create(), c.m4.f.Create()}
}
func (c *combine4[IN, A1, O1, A2, O2, A3, O3, A4, O4, OUT]) Add(t t4[A1, A2, A3, A4], in IN) t4[A1, A2, A3, A4] {
	return t4[A1, A2, A3, A4]{c.m1.f.Add(t.A, in), c.m2.f.Add(t.B, in), c.m3.f.Add(t.C, in), c.m4.f.Add(t.D, in)}
}
func (c *combine4[IN, A1, O1, A2, O2, A3, O3, A4, O4, OUT]) Merge(a, b t4[A1, A2, A3, A4]) t4[A1, A2, A3, A4] {
	return t4[A1, A2, A3, A4]{c.m1.f.Merge(a.A, b.A), c.m2.f.Merge(a.B, b.B), c.m3.f.Merge(a.C, b.C), c.m4.f.Merge(a.D, b.D)}
}
func (c *combine4[IN, A1, O1, A2, O2, A3, O3, A4, O4, OUT]) Result(t t4[A1, A2, A3, A4]) OUT {
	return c.result(c.m1.f.Result(t.A), c.m2.f.Result(t.B), c.m3.f.Result(t.C), c.m4.f.Result(t.D))
}

// Retract takes in out of every part; see combine2.Retract.
func (c *combine4[IN, A1, O1, A2, O2, A3, O3, A4, O4, OUT]) Retract(t t4[A1, A2, A3, A4], in IN) t4[A1, A2, A3, A4] {
	return t4[A1, A2, A3, A4]{c.m1.retract(t.A, in), c.m2.retract(t.B, in), c.m3.retract(t.C, in), c.m4.retract(t.D, in)}
}
func (c *combine4[IN, A1, O1, A2, O2, A3, O3, A4, O4, OUT]) CanRetract() bool {
	return c.m1.canR && c.m2.canR && c.m3.canR && c.m4.canR
}
func (c *combine4[IN, A1, O1, A2, O2, A3, O3, A4, O4, OUT]) NumViews() int {
	return c.m1.views + c.m2.views + c.m3.views + c.m4.views
}
func (c *combine4[IN, A1, O1, A2, O2, A3, O3, A4, O4, OUT]) AddWith(t t4[A1, A2, A3, A4], in IN, v Views, first int) t4[A1, A2, A3, A4] {
	t.A = c.m1.addWith(t.A, in, v, first)
	first += c.m1.views
	t.B = c.m2.addWith(t.B, in, v, first)
	first += c.m2.views
	t.C = c.m3.addWith(t.C, in, v, first)
	t.D = c.m4.addWith(t.D, in, v, first+c.m3.views)
	return t
}
func (c *combine4[IN, A1, O1, A2, O2, A3, O3, A4, O4, OUT]) RetractWith(t t4[A1, A2, A3, A4], in IN, v Views, first int) t4[A1, A2, A3, A4] {
	t.A = c.m1.retractWith(t.A, in, v, first)
	first += c.m1.views
	t.B = c.m2.retractWith(t.B, in, v, first)
	first += c.m2.views
	t.C = c.m3.retractWith(t.C, in, v, first)
	t.D = c.m4.retractWith(t.D, in, v, first+c.m3.views)
	return t
}
