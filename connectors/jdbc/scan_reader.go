package jdbc

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// scanReader reads its splits one after the other. A goroutine runs the
// query of the current split and hands its rows over in batches, so that
// the database's sending and decoding overlap the job's processing; Read
// emits them and remembers the last row emitted, the split's position.
type scanReader struct {
	src   *Source
	plan  plan
	queue []*split
	cur   *running
	// pending are rows of the current split received and not yet emitted.
	pending []fetched
	conn    readConn
	dbCols  map[string]dbColumn
	timer   *time.Timer
}

// fetched is a row read: the row emitted, and the row of every column
// fetched (the same row unless key columns were added to order by).
type fetched struct {
	out, full types.Row
}

// running is the query of a split in progress.
type running struct {
	sp     *split
	ch     chan []fetched
	cancel context.CancelFunc
	err    error // set before ch is closed
	// last is the last row emitted (all columns fetched).
	last    types.Row
	emitted bool
}

// batchRows is the number of rows handed over at once.
const batchRows = 256

func (r *scanReader) AddSplits(splits []connector.Split) error {
	for _, s := range splits {
		var sp split
		if err := json.Unmarshal(s.State, &sp); err != nil {
			return fmt.Errorf("jdbc: split %s of %s in a checkpoint: %w", s.ID, r.src.cfg.where(), err)
		}
		r.queue = append(r.queue, &sp)
	}
	return nil
}

func (r *scanReader) Read(out connector.Output[connector.TableRecord]) error {
	waited := false
	for out.Room() > 0 {
		if r.cur == nil {
			if len(r.queue) == 0 {
				return nil
			}
			r.start(r.queue[0])
			r.queue = r.queue[1:]
		}
		if len(r.pending) == 0 {
			var b []fetched
			var ok bool
			select {
			case b, ok = <-r.cur.ch:
			default:
				if waited {
					return nil
				}
				waited = true
				if r.timer == nil {
					r.timer = time.NewTimer(2 * time.Millisecond)
				} else {
					r.timer.Reset(2 * time.Millisecond)
				}
				select {
				case b, ok = <-r.cur.ch:
					if !r.timer.Stop() {
						<-r.timer.C
					}
				case <-r.timer.C:
					return nil
				}
			}
			if !ok {
				cur := r.cur
				r.cur = nil
				if cur.err != nil {
					return fmt.Errorf("jdbc: reading split %d of %s: %w", cur.sp.Index, r.src.cfg.where(), cur.err)
				}
				out.Split(cur.sp.id()).Finish()
				continue
			}
			r.pending = b
		}
		so := out.Split(r.cur.sp.id())
		n := min(len(r.pending), out.Room())
		if n == 0 {
			return nil
		}
		for _, f := range r.pending[:n] {
			so.Emit(connector.TableRecord{Kind: changelog.Insert, Row: f.out})
		}
		r.cur.last, r.cur.emitted = r.pending[n-1].full, true
		r.cur.sp.Emitted += int64(n)
		r.pending = r.pending[n:]
	}
	return nil
}

// start runs the query of sp in a goroutine.
func (r *scanReader) start(sp *split) {
	ctx, cancel := context.WithCancel(context.Background())
	run := &running{sp: sp, ch: make(chan []fetched, 4), cancel: cancel}
	r.cur = run
	go func() {
		defer close(run.ch)
		run.err = r.produce(ctx, run)
	}()
}

// produce reads the split's rows into run.ch.
func (r *scanReader) produce(ctx context.Context, run *running) error {
	s := r.src
	if r.conn == nil {
		cctx, cancel := context.WithTimeout(ctx, s.cfg.connectTimeout)
		conn, err := connectRead(cctx, s.cfg.config)
		cancel()
		if err != nil {
			return err
		}
		cols, err := conn.columns(ctx)
		if err != nil {
			conn.close()
			return err
		}
		r.conn, r.dbCols = conn, cols
	}
	q, args, err := s.query(r.plan, run.sp, r.dbCols)
	if err != nil {
		return err
	}
	arena := types.NewArena(1 << 16)
	dec, err := newDecoder(s.cfg.config, s.table, r.plan.fetch, r.dbCols, arena)
	if err != nil {
		return err
	}
	var outW *types.RowWriter
	if len(r.plan.fetch) > len(s.cols) {
		fs := make([]types.Field, len(s.cols))
		for j, c := range s.cols {
			fs[j] = s.table.Schema.Field(c)
		}
		outW = types.NewRowWriter(types.MustRowType(fs...), arena)
	}
	batch := make([]fetched, 0, batchRows)
	send := func() error {
		select {
		case run.ch <- batch:
			batch = make([]fetched, 0, batchRows)
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err = r.conn.query(ctx, q, args, s.cfg.fetchSize, dec, func(row types.Row) error {
		f := fetched{out: row, full: row}
		if outW != nil {
			for j := range s.cols {
				outW.CopyField(j, row, j)
			}
			f.out = outW.Finish()
		}
		batch = append(batch, f)
		if len(batch) == batchRows {
			return send()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = send()
	}
	if err != nil {
		// The connection may be in the middle of a result.
		r.conn.close()
		r.conn = nil
	}
	return err
}

// SnapshotState returns the splits not finished, the current one with
// the position of the last row emitted.
func (r *scanReader) SnapshotState(int64) ([]connector.Split, error) {
	var out []connector.Split
	if r.cur != nil {
		sp := *r.cur.sp
		if r.cur.emitted && r.plan.key != nil {
			w := types.NewRowWriter(r.plan.keyRT, types.NewArena(256))
			for j, pos := range r.plan.key {
				w.CopyField(j, r.cur.last, pos)
			}
			sp.Key = w.Finish().Bytes()
		}
		b, err := json.Marshal(&sp)
		if err != nil {
			return nil, err
		}
		out = append(out, connector.Split{ID: sp.id(), State: b})
	}
	for _, sp := range r.queue {
		b, err := json.Marshal(sp)
		if err != nil {
			return nil, err
		}
		out = append(out, connector.Split{ID: sp.id(), State: b})
	}
	return out, nil
}

// Close stops the query in progress and closes the connection.
func (r *scanReader) Close() error {
	if r.cur != nil {
		r.cur.cancel()
		for range r.cur.ch {
		}
		r.cur = nil
	}
	if r.conn != nil {
		r.conn.close()
		r.conn = nil
	}
	return nil
}
