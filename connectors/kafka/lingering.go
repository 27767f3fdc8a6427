package kafka

import (
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// running holds the transactional ids of the transactions this process's
// exactly-once writers have open, which abortLingering must not touch: a
// restore on subtask 0 runs while other subtasks may already write.
var running = txRegistry{ids: map[string]bool{}}

// txRegistry is a set of transactional ids, safe for concurrent use.
type txRegistry struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (r *txRegistry) add(id string) {
	r.mu.Lock()
	r.ids[id] = true
	r.mu.Unlock()
}

func (r *txRegistry) remove(id string) {
	r.mu.Lock()
	delete(r.ids, id)
	r.mu.Unlock()
}

func (r *txRegistry) has(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ids[id]
}

// ownID tells whether id is a transactional id the sink makes with
// prefix: '<prefix>-<subtask>-<n>'.
func ownID(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix+"-")
	if !ok {
		return false
	}
	s, n, ok := strings.Cut(rest, "-")
	if !ok {
		return false
	}
	_, err1 := strconv.ParseUint(s, 10, 31)
	_, err2 := strconv.ParseUint(n, 10, 63)
	return err1 == nil && err2 == nil
}

// abortLingering aborts the transactions of the sink's transactional-id
// prefix that a run which ended without ending them (killed, or failed)
// left open on the brokers, except those in keep (the restored
// checkpoint's) and those this process has open. Until a transaction is
// ended, consumers reading with isolation.level=read_committed read
// nothing of its partitions past its first record, so without this a
// crash would hide everything the next run writes for up to
// transaction.timeout.ms (15 minutes by default), when the brokers abort
// it themselves. Their records belong to no completed checkpoint: the
// restored job writes them again.
//
// It lists the open transactions with ListTransactions (Kafka 3.0 and
// later) and aborts each by fencing its producer: a producer initialised
// with the same transactional id makes the coordinator abort it. With
// older brokers it logs that the brokers will abort them after the
// timeout, and goes on.
func (c *committer[T]) abortLingering(keep map[string]bool) error {
	if c.admin == nil {
		cl, err := c.cfg.newClient(c.ctx.Log())
		if err != nil {
			return err
		}
		c.admin = cl
	}
	ctx, cancel := ctxTimeout()
	defer cancel()
	req := kmsg.NewPtrListTransactionsRequest()
	req.StateFilters = []string{"Ongoing"}
	var lingering []string
	for _, shard := range c.admin.RequestSharded(ctx, req) {
		err := shard.Err
		if err == nil {
			err = kerr.ErrorForCode(shard.Resp.(*kmsg.ListTransactionsResponse).ErrorCode)
		}
		if err != nil {
			c.ctx.Log().Warn("kafka: cannot list the open transactions of the brokers (brokers before Kafka 3.0 do not list them): transactions an earlier run of the job left open are aborted by the brokers after transaction.timeout.ms, and until then consumers reading committed records wait at them",
				"sink", c.cfg.name, "transactional-id-prefix", c.cfg.txPrefix, "error", err)
			return nil
		}
		for _, t := range shard.Resp.(*kmsg.ListTransactionsResponse).TransactionStates {
			if ownID(c.cfg.txPrefix, t.TransactionalID) && !keep[t.TransactionalID] && !running.has(t.TransactionalID) {
				lingering = append(lingering, t.TransactionalID)
			}
		}
	}
	for _, id := range lingering {
		if err := c.fence(id); err != nil {
			return c.wrap(kafkaTx{ID: id}, err)
		}
		c.ctx.Log().Info("kafka: aborted a transaction an earlier run left open", "sink", c.cfg.name, "transactional.id", id)
	}
	return nil
}

// fence initialises a producer with transactional id id, which aborts the
// transaction an earlier producer of the id left open, and closes it.
func (c *committer[T]) fence(id string) error {
	opts, err := c.cfg.producerOpts(c.ctx.Subtask())
	if err != nil {
		return err
	}
	cl, err := c.cfg.newClient(c.ctx.Log(), append(opts, kgo.TransactionalID(id))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := ctxTimeout()
	defer cancel()
	if _, _, err := cl.ProducerID(ctx); err != nil {
		return err
	}
	return nil
}
