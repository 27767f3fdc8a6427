package expr

import "github.com/eddystream/eddy/sql/types"

// periodMillis returns the length, in milliseconds, of the wall-clock
// intervals aligned on the epoch within which the pattern's text stays
// the same: a day for a pattern of date fields alone ('yyyy-MM-dd'), an
// hour, a minute ('HH:mm') or a second. It returns 0 for a pattern that
// prints a fraction of a second or a zone, or a letter it does not know.
func (f *dateFormat) periodMillis() int64 {
	if f.hasZone {
		return 0
	}
	period := int64(86_400_000)
	for _, it := range f.items {
		var p int64
		switch it.letter {
		case 0:
			continue
		case 'G', 'y', 'u', 'Y', 'M', 'L', 'd', 'D', 'E', 'e', 'c', 'F', 'Q', 'q', 'w', 'W':
			p = 86_400_000
		case 'a', 'H', 'k', 'h', 'K':
			p = 3_600_000
		case 'm':
			p = 60_000
		case 's':
			p = 1_000
		default:
			return 0
		}
		period = min(period, p)
	}
	return period
}

// memoDateFormat wraps ev, DATE_FORMAT of the TIMESTAMP ts by the
// constant pattern f, so that a timestamp in the same period of f
// (periodMillis) as the one before gives the text computed for that one
// again, without formatting it: event times mostly move forward, and
// 'yyyy-MM-dd' or 'HH:mm' changes once a day or a minute. It returns ev as
// it is when f's text may change within a second.
func memoDateFormat(ev *Eval, ts func(types.Row) (types.Timestamp, bool), f *dateFormat) *Eval {
	period := f.periodMillis()
	if period == 0 {
		return ev
	}
	str := ev.Str
	var (
		valid bool
		last  int64
		text  string
	)
	memo := *ev
	memo.Str = func(r types.Row) (string, bool) {
		t, null := ts(r)
		if null {
			return "", true
		}
		p := t.Millis / period
		if t.Millis%period < 0 {
			p--
		}
		if valid && p == last {
			return text, false
		}
		s, null := str(r)
		if null {
			return "", true
		}
		valid, last, text = true, p, s
		return s, false
	}
	return &memo
}
