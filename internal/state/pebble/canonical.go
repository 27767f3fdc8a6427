package pebble

import "github.com/eddystream/eddy/internal/state"

var _ state.TableKindLister = (*Backend)(nil)

// TableKinds returns the kind of every table declared on the backend, by
// name (state.TableKindLister): canonical snapshots record the kinds, and
// restores of canonical snapshots check them.
func (b *Backend) TableKinds() map[string]string {
	out := make(map[string]string, len(b.tables))
	for name, t := range b.tables {
		out[name] = t.kind
	}
	return out
}
