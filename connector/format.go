package connector

// Decoder turns the bytes of one message (a line, a broker message, a file
// record) into records. A changelog format may emit several records for one
// message (an update as a -U and a +U). An error means the message is
// malformed; the reader reports it with Output.BadRecord.
//
// A Decoder is used by one goroutine at a time.
type Decoder[T any] interface {
	Decode(data []byte, emit func(T)) error
}

// DecoderFunc adapts a function that decodes one record per message to a
// Decoder.
type DecoderFunc[T any] func(data []byte) (T, error)

// Decode calls f and emits its record.
func (f DecoderFunc[T]) Decode(data []byte, emit func(T)) error {
	v, err := f(data)
	if err != nil {
		return err
	}
	emit(v)
	return nil
}

// Encoder turns a record into the bytes of one message, appended to dst. An
// Encoder is used by one goroutine at a time. The record, and memory it
// refers to, may change once Encode returns: an Encoder does not keep it.
type Encoder[T any] interface {
	Encode(dst []byte, v T) ([]byte, error)
}

// EncoderFunc adapts a function to an Encoder.
type EncoderFunc[T any] func(dst []byte, v T) ([]byte, error)

// Encode calls f.
func (f EncoderFunc[T]) Encode(dst []byte, v T) ([]byte, error) { return f(dst, v) }
