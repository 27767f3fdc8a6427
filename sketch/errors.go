package sketch

import "errors"

// ErrIncompatible is wrapped by every Merge error caused by sketches whose
// parameters (size, precision, seed) differ. Its text reads naturally as the
// prefix of the full message, for example
// "sketch: cannot merge HyperLogLog of precision 12 with precision 14".
var ErrIncompatible = errors.New("sketch: cannot merge")

// ErrTruncated is wrapped by UnmarshalBinary errors caused by input that ends
// before the encoding does.
var ErrTruncated = errors.New("sketch: truncated")

// ErrVersion is wrapped by UnmarshalBinary errors caused by an encoding whose
// leading version byte this package does not know.
var ErrVersion = errors.New("sketch: unsupported encoding version")

// ErrCorrupt is wrapped by UnmarshalBinary errors caused by an encoding that
// is long enough but describes an impossible state, has a foreign type tag or
// carries trailing bytes.
var ErrCorrupt = errors.New("sketch: corrupt")
