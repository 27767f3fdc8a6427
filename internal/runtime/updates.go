package runtime

import (
	"reflect"
	"strings"
	"unsafe"

	"github.com/eddystream/eddy/changelog"
)

// The two halves of an update, a -U and the +U after it, travel in one
// batch everywhere in a job: operators emit both in one call, exchanges and
// sources never end a batch after a -U, and rebalancing sends the record
// after a -U to the same subtask as the -U. Since a barrier only ever falls
// between batches, an update is never split by a checkpoint, and a sink
// writes both halves into the same transaction. A -U that ends a batch has
// no +U: it is a retraction on its own.

// UpdateBeforeOf returns a function reporting whether a record of type T is
// the first half of an update (-U), or nil if records of type T carry no
// change kind (they do if T implements changelog.Kinded). For a
// changelog.Change the kind is read in place; other Kinded types are asked
// through the interface.
func UpdateBeforeOf[T any]() func(T) bool {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface || !t.Implements(reflect.TypeFor[changelog.Kinded]()) {
		return nil
	}
	if isChange(t) {
		return func(v T) bool {
			return *(*changelog.Kind)(unsafe.Pointer(&v)) == changelog.UpdateBefore
		}
	}
	return func(v T) bool { return any(v).(changelog.Kinded).RowKind() == changelog.UpdateBefore }
}

// isChange reports whether t is an instance of changelog.Change, whose
// first field is its kind.
func isChange(t reflect.Type) bool {
	ct := reflect.TypeFor[changelog.Change[struct{}]]()
	if t.Kind() != reflect.Struct || t.PkgPath() != ct.PkgPath() || !strings.HasPrefix(t.Name(), "Change[") {
		return false
	}
	f := t.Field(0)
	return f.Offset == 0 && f.Type == reflect.TypeFor[changelog.Kind]()
}
