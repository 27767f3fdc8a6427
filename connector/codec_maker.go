package connector

// DecoderMaker checks once that the format the options of ctx chose makes
// decoders of records of ctx.RecordType, and returns a function making a
// new decoder at each call, for a factory whose source gives each subtask
// a decoder of its own (a Decoder is used by one goroutine at a time). T
// is as for DecoderFor; the error is the one DecoderFor returns.
func DecoderMaker[T any](ctx Context) (func() Decoder[T], error) {
	if _, err := DecoderFor[T](ctx); err != nil {
		return nil, err
	}
	return func() Decoder[T] {
		d, _ := DecoderFor[T](ctx)
		return d
	}, nil
}

// EncoderMaker checks once that the format the options of ctx chose makes
// encoders of records of ctx.RecordType, and returns a function making a
// new encoder at each call, for a factory whose sink gives each subtask an
// encoder of its own (an Encoder is used by one goroutine at a time). T is
// as for DecoderFor; the error is the one EncoderFor returns.
func EncoderMaker[T any](ctx Context) (func() Encoder[T], error) {
	if _, err := EncoderFor[T](ctx); err != nil {
		return nil, err
	}
	return func() Encoder[T] {
		e, _ := EncoderFor[T](ctx)
		return e
	}, nil
}
