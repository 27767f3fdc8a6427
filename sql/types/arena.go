package types

// DefaultArenaChunk is the size of an arena's chunks unless said otherwise.
const DefaultArenaChunk = 64 << 10

// Arena hands out the memory of finished rows from large chunks: writing a
// row allocates nothing but its share of a chunk. In an arena of NewArena
// a chunk is never written again once a row is finished in it and never
// reused; a new chunk is allocated when one is full, and the old one lives
// as long as any row in it. Scratch and recycling arenas (NewScratchArena,
// NewRecyclingArena) reuse their memory instead, for rows that live
// briefly. An Arena is not safe for concurrent use: give each goroutine
// its own.
type Arena struct {
	_     cacheLinePad
	buf   []byte // the current chunk; len is the part handed out
	chunk int
	total int64
	// scratch makes every alloc hand out the start of buf again.
	scratch bool
	// recycle keeps the chunks, which Rewind hands out again; next is the
	// index in chunks of the chunk after buf.
	recycle bool
	chunks  [][]byte
	next    int
	// own gives every row memory of its own.
	own bool
	_   cacheLinePad
}

// NewOwnArena returns an arena that gives every row memory of its own, one
// allocation each, freed with the row: for rows that a reader keeps, in
// state, for longer than the rows written around them, which would keep
// a shared chunk alive.
func NewOwnArena() *Arena { return &Arena{own: true} }

// NewScratchArena returns an arena that hands out the same memory for
// every row: a row finished in it is valid only until the next one is.
// It is for rows that are read, and copied if kept, before the next one is
// written, such as those a source hands to a projection that runs in it.
func NewScratchArena() *Arena { return &Arena{scratch: true} }

// NewRecyclingArena returns an arena of chunks of chunkSize bytes
// (DefaultArenaChunk if chunkSize <= 0) that Rewind hands out again: the
// rows finished in it are valid until the next Rewind. It is for rows that
// are all consumed, and copied if kept, by some point, such as those of a
// source's read when nothing downstream keeps them
// (connector.ReusesRecords).
func NewRecyclingArena(chunkSize int) *Arena {
	a := NewArena(chunkSize)
	a.recycle = true
	return a
}

// Rewind makes a recycling arena hand out its chunks again from the start:
// every row finished in it before is invalid. It does nothing to other
// arenas.
func (a *Arena) Rewind() {
	if !a.recycle || len(a.chunks) == 0 {
		return
	}
	if len(a.chunks) > maxRecycledChunks {
		// A burst of rows (a join key of many matches) leaves no more
		// memory behind than this.
		clear(a.chunks[maxRecycledChunks:])
		a.chunks = a.chunks[:maxRecycledChunks]
	}
	a.buf, a.next = a.chunks[0][:0], 1
}

// maxRecycledChunks bounds the chunks a recycling arena keeps from one
// Rewind to the next.
const maxRecycledChunks = 32

// NewArena returns an arena of chunks of chunkSize bytes (DefaultArenaChunk
// if chunkSize <= 0). A row larger than a chunk gets a chunk of its own.
func NewArena(chunkSize int) *Arena {
	if chunkSize <= 0 {
		chunkSize = DefaultArenaChunk
	}
	return &Arena{chunk: chunkSize}
}

// alloc returns n bytes of the arena, never handed out before (in a
// recycling arena: since the last Rewind).
func (a *Arena) alloc(n int) []byte {
	if a.own {
		a.total += int64(n)
		return make([]byte, n)
	}
	if a.scratch {
		if cap(a.buf) < n {
			a.buf = make([]byte, 0, max(2*n, 256))
		}
		a.total += int64(n)
		return a.buf[:n:n]
	}
	if cap(a.buf)-len(a.buf) < n {
		size := a.chunk
		if n > size/4 {
			// A large row gets its own chunk, so that the current chunk
			// keeps serving small ones.
			if n > size {
				a.total += int64(n)
				return make([]byte, n)
			}
		}
		a.buf = a.newChunk(size)
	}
	s := len(a.buf)
	a.buf = a.buf[:s+n]
	a.total += int64(n)
	return a.buf[s : s+n : s+n]
}

// newChunk returns an empty chunk of size bytes: a new one, or in a
// recycling arena the next one it has.
func (a *Arena) newChunk(size int) []byte {
	if !a.recycle {
		return make([]byte, 0, size)
	}
	if a.next < len(a.chunks) {
		a.next++
		return a.chunks[a.next-1][:0]
	}
	c := make([]byte, 0, size)
	a.chunks = append(a.chunks, c)
	a.next = len(a.chunks)
	return c
}

// Allocated returns the bytes handed out so far.
func (a *Arena) Allocated() int64 { return a.total }

// Copy returns a copy of r in the arena.
func (a *Arena) Copy(r Row) Row {
	if len(r.b) == 0 {
		return r
	}
	dst := a.alloc(len(r.b))
	copy(dst, r.b)
	return Row{b: unsafeString(dst), n: r.n}
}

// String returns a copy of s in the arena.
func (a *Arena) String(s string) string {
	if len(s) == 0 {
		return ""
	}
	dst := a.alloc(len(s))
	copy(dst, s)
	return unsafeString(dst)
}
