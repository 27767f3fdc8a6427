package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// source reads the stream: without a group, as one split read with XREAD;
// with one, as one split per consumer of the group.
type source[T any] struct {
	cfg        *config
	newDecoder func(*entryMeta) connector.Decoder[T]
}

// ChangelogMode says what the format yields: insertions, or the changes of
// a changelog format.
func (s *source[T]) ChangelogMode() changelog.Mode { return s.cfg.changelogs }

func (s *source[T]) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	if s.cfg.group != "" {
		return newGroupEnumerator(s.cfg, ctx, restored)
	}
	if len(restored) > 0 && stateKind(restored) == kindEnum {
		return nil, fmt.Errorf("redis %q: the checkpoint was taken reading stream %q through consumer group; the source now has no 'group': set it again, or start the job without restoring", s.cfg.name, s.cfg.stream)
	}
	return connector.NewStaticEnumerator(ctx, restored, func(int) ([]connector.Split, error) {
		st, err := s.cfg.discover(ctx)
		if err != nil {
			return nil, err
		}
		return []connector.Split{{ID: s.cfg.stream, State: st.encode()}}, nil
	})
}

// discover resolves where the read of the stream starts and, for a
// bounded read, ends, on a job's first run.
func (c *config) discover(ectx connector.EnumeratorContext) (plainState, error) {
	st := plainState{stream: c.stream, bounded: c.bounded}
	if c.startMode != latest && !c.bounded {
		st.pos = c.startAfter()
		return st, nil
	}
	cli, err := c.connect("the enumerator of " + ectx.SourceName())
	if err != nil {
		return st, err
	}
	defer cli.Close()
	last, err := c.lastID(cli)
	if err != nil {
		return st, err
	}
	st.pos = c.startAfter()
	if c.startMode == latest {
		st.pos = last
	}
	st.end = last
	return st, nil
}

// lastID returns the id of the last entry ever added to the stream (0-0
// if there is no stream).
func (c *config) lastID(cli *goredis.Client) (entryID, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	info, err := cli.XInfoStream(ctx, c.stream).Result()
	if err != nil {
		if err.Error() == "ERR no such key" {
			return entryID{}, nil
		}
		return entryID{}, fmt.Errorf("redis %q: reading the state of stream %q on %s: %w", c.name, c.stream, c.server(), c.scrub(err))
	}
	id, err := parseID(info.LastGeneratedID)
	if err != nil {
		return entryID{}, fmt.Errorf("redis %q: stream %q on %s: its last id: %w", c.name, c.stream, c.server(), err)
	}
	return id, nil
}

func (s *source[T]) NewReader(ctx connector.ReaderContext) (connector.Reader[T], error) {
	return newReader(s, ctx), nil
}
