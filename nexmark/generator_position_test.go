package nexmark

import "testing"

func TestSetPositionResumesTheSequence(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxEvents = 10_000
	cfg.OutOfOrderGroupSize = 7
	for _, parts := range []int{1, 3} {
		for part := range parts {
			all := generateIDs(t, newTestGenerator(t, cfg, part, parts), int(newTestGenerator(t, cfg, part, parts).Len()))
			for _, cut := range []int64{0, 1, 49, 50, 777, int64(len(all))} {
				first := newTestGenerator(t, cfg, part, parts)
				buf := make([]Event, 100)
				for first.Position() < cut {
					first.NextBatch(buf[:min(int64(len(buf)), cut-first.Position())])
				}
				pos := first.Position()
				resumed := newTestGenerator(t, cfg, part, parts)
				if err := resumed.SetPosition(pos); err != nil {
					t.Fatal(err)
				}
				rest := generateIDs(t, resumed, len(all)-int(pos))
				for i, e := range rest {
					if w := all[int(pos)+i]; e != w {
						t.Fatalf("parts=%d part %d resumed at %d: event %d differs:\n%+v\n%+v", parts, part, pos, i, w, e)
					}
				}
				var e Event
				if resumed.Next(&e) {
					t.Fatalf("parts=%d part %d: resumed generator not exhausted", parts, part)
				}
			}
		}
	}
}

func TestSetPositionRejectsOutOfRange(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxEvents = 100
	g := newTestGenerator(t, cfg, 0, 1)
	for _, pos := range []int64{-1, 101} {
		if err := g.SetPosition(pos); err == nil {
			t.Errorf("SetPosition(%d) succeeded, want an error", pos)
		}
	}
	if err := g.SetPosition(100); err != nil {
		t.Errorf("SetPosition(100) = %v, want nil", err)
	}
}
