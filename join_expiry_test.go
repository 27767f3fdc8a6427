package eddy_test

import (
	"testing"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// TestJoinRowsExpireAtRefusesBadUse checks the build-time errors of
// JoinRowsExpireAt.
func TestJoinRowsExpireAtRefusesBadUse(t *testing.T) {
	expire := func(r relRow) int64 { return r.G }
	for name, c := range map[string]struct {
		mode changelog.Mode
		kind eddy.JoinKind
		opts []eddy.TableOption
		want string
	}{
		"updating side":  {changelog.Retract, eddy.InnerJoin, []eddy.TableOption{eddy.JoinRowsExpireAt(eddy.LeftSide, expire)}, "JoinRowsExpireAt(LeftSide) needs an insert-only input"},
		"wrong row type": {changelog.InsertOnly, eddy.InnerJoin, []eddy.TableOption{eddy.JoinRowsExpireAt(eddy.RightSide, func(string) int64 { return 0 })}, "JoinRowsExpireAt(RightSide) takes a func(string) int64"},
		"unique key": {changelog.InsertOnly, eddy.InnerJoin, []eddy.TableOption{eddy.JoinRowsExpireAt(eddy.LeftSide, expire), eddy.JoinKeyContainsUniqueKey(eddy.RightSide)},
			"does not combine with JoinKeyContainsUniqueKey"},
		"semi join": {changelog.InsertOnly, eddy.LeftSemiJoin, []eddy.TableOption{eddy.JoinRowsExpireAt(eddy.LeftSide, expire)}, "takes no JoinRowsExpireAt(LeftSide)"},
	} {
		t.Run(name, func(t *testing.T) {
			env := eddy.NewEnvironment()
			rows := eddy.AsChangelog(eddy.Inserts(eddy.FromSlice(env, []relRow{{}}, eddy.NoWatermarks[relRow]())), c.mode)
			key := func(r relRow) int64 { return r.G }
			out := eddy.Join(eddy.GroupBy(rows, key), eddy.GroupBy(rows, key), c.kind, func(a, b *relRow) relRow { return *a }, c.opts...)
			eddy.Discard(out)
			expectBuildError(t, env, c.want)
		})
	}
}
