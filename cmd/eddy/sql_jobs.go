package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/eddystream/eddy"
)

// The states of a job of the SQL client, as SHOW JOBS prints them.
const (
	jobRunning  = "RUNNING"
	jobFinished = "FINISHED"
	jobCanceled = "CANCELED"
	jobFailed   = "FAILED"
)

// newJobID returns the id of a new job: 8 random hex digits.
var newJobID = func() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// sqlJob is a job the SQL client started: an INSERT in the background or
// the query whose result it shows.
type sqlJob struct {
	id, name string
	env      *eddy.Environment
	// background is set for an INSERT that runs while the client goes on.
	background bool
	cancel     context.CancelFunc
	start      time.Time
	done       chan struct{}

	mu     sync.Mutex
	status string
	err    error
	// stopping is set once STOP JOB stops the job, whose end then goes
	// without a notice.
	stopping bool
}

// Status returns the job's state and, for a failed job, its error.
func (j *sqlJob) Status() (string, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.status, j.err
}

// stop cancels the job and waits for it to end.
func (j *sqlJob) stop() {
	j.setStopping(true)
	j.cancel()
	<-j.done
}

func (j *sqlJob) setStopping(v bool) {
	j.mu.Lock()
	j.stopping = v
	j.mu.Unlock()
}

// sqlJobs is the SQL client's jobs, in the order they started.
type sqlJobs struct {
	mu   sync.Mutex
	list []*sqlJob
	// ended collects what the client reports about jobs that ended in the
	// background, until it prints it.
	ended []string
}

// start runs env as job id named name until it ends or ctx is cancelled,
// and returns it. A job in the background (an INSERT the client does not
// wait for) has its end reported.
func (js *sqlJobs) start(ctx context.Context, id string, env *eddy.Environment, name string, background bool) *sqlJob {
	ctx, cancel := context.WithCancel(ctx)
	j := &sqlJob{id: id, name: name, env: env, cancel: cancel, start: time.Now(), done: make(chan struct{}), status: jobRunning, background: background}
	js.mu.Lock()
	js.list = append(js.list, j)
	js.mu.Unlock()
	go func() {
		err := env.Execute(ctx, name)
		j.mu.Lock()
		switch {
		case err != nil:
			j.status, j.err = jobFailed, err
		case ctx.Err() != nil:
			j.status = jobCanceled
		default:
			j.status = jobFinished
		}
		j.mu.Unlock()
		cancel()
		if msg := j.notice(); msg != "" {
			js.mu.Lock()
			js.ended = append(js.ended, msg)
			js.mu.Unlock()
		}
		close(j.done)
	}()
	return j
}

// notice returns what the client says about a background job that has
// ended, "" for a job that runs, was stopped by STOP JOB or is not in the
// background.
func (j *sqlJob) notice() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.background || j.stopping {
		return ""
	}
	switch j.status {
	case jobFinished:
		return fmt.Sprintf("[INFO] Job %s (%s) finished.", j.id, j.name)
	case jobCanceled:
		return fmt.Sprintf("[INFO] Job %s (%s) was stopped.", j.id, j.name)
	case jobFailed:
		return fmt.Sprintf("[ERROR] Job %s (%s) failed: %v", j.id, j.name, j.err)
	}
	return ""
}

// background returns the jobs started in the background that STOP JOB
// has not stopped, in the order they started.
func (js *sqlJobs) background() []*sqlJob {
	js.mu.Lock()
	defer js.mu.Unlock()
	var out []*sqlJob
	for _, j := range js.list {
		j.mu.Lock()
		if j.background && !j.stopping {
			out = append(out, j)
		}
		j.mu.Unlock()
	}
	return out
}

// count returns the number of jobs started.
func (js *sqlJobs) count() int {
	js.mu.Lock()
	defer js.mu.Unlock()
	return len(js.list)
}

// find returns the job with id.
func (js *sqlJobs) find(id string) *sqlJob {
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, j := range js.list {
		if j.id == id {
			return j
		}
	}
	return nil
}

// running returns the jobs that have not ended.
func (js *sqlJobs) running() []*sqlJob {
	js.mu.Lock()
	defer js.mu.Unlock()
	var out []*sqlJob
	for _, j := range js.list {
		if s, _ := j.Status(); s == jobRunning {
			out = append(out, j)
		}
	}
	return out
}

// takeEnded returns what the client says about the background jobs that
// ended since the last call, in the order they ended.
func (js *sqlJobs) takeEnded() []string {
	js.mu.Lock()
	defer js.mu.Unlock()
	out := js.ended
	js.ended = nil
	return out
}

// table returns SHOW JOBS: id, name, status and start time of every job.
func (js *sqlJobs) table() []string {
	js.mu.Lock()
	jobs := append([]*sqlJob(nil), js.list...)
	js.mu.Unlock()
	t := newTextTable([]string{"job id", "job name", "status", "start time"}, nil, nil)
	var rows [][]string
	for _, j := range jobs {
		s, _ := j.Status()
		rows = append(rows, []string{j.id, j.name, s, j.start.Format("2006-01-02 15:04:05.000")})
	}
	t.fit(rows)
	return t.render(rows)
}
