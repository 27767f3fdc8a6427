package ops

// CacheLinePad ends a struct that one subtask writes at every record (a
// split's watermark generator, which notes each timestamp): the next
// object in memory, maybe another subtask's, then starts at least a cache
// line after the struct's fields, so that the two cores running the
// subtasks do not take the line from each other at every record.
type CacheLinePad [64]byte
