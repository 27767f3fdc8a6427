package main

import (
	"context"
	"io"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
)

// profileChanges is an upsert stream of profiles keyed by name, as a CDC
// source or a compacted topic delivers it: no -U, and a -D that carries the
// key alone.
func profileChanges() []changelog.Change[Profile] {
	return []changelog.Change[Profile]{
		changelog.InsertOf(Profile{Name: "alice", City: "Paris"}),
		changelog.Of(changelog.UpdateAfter, Profile{Name: "alice", City: "Paris"}), // no change
		changelog.Of(changelog.UpdateAfter, Profile{Name: "alice", City: "Rome"}),
		changelog.InsertOf(Profile{Name: "bob", City: "Oslo"}),
		changelog.Of(changelog.Delete, Profile{Name: "alice"}), // the key alone
	}
}

// normalize turns the upsert stream into a retract stream, which
// GroupAggregate, TopN and the joins take: every update becomes -U of the
// old row and +U of the new one, every deletion carries the whole row.
func normalize(ctx context.Context, w io.Writer) error {
	env := eddy.NewEnvironment()
	src := eddy.FromSlice(env, profileChanges(), eddy.NoWatermarks[changelog.Change[Profile]]())
	upserts := eddy.AsChangelog(src, changelog.Upsert)
	retract := eddy.ChangelogNormalize(eddy.GroupBy(upserts, func(p Profile) string { return p.Name }))
	eddy.PrintTo(retract, w)
	return env.Execute(ctx, "normalize")
}
