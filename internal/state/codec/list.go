package codec

import "encoding/binary"

// List returns the codec of []T: a uvarint count, then the elements
// encoded by ec. An empty list decodes as nil.
func List[T any](ec Codec[T]) Codec[[]T] { return listCodec[T]{ec} }

type listCodec[T any] struct{ ec Codec[T] }

func (c listCodec[T]) Append(dst []byte, l []T) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(l)))
	for _, v := range l {
		dst = c.ec.Append(dst, v)
	}
	return dst
}

func (c listCodec[T]) Decode(src []byte) ([]T, int, error) {
	n, pos := binary.Uvarint(src)
	if pos <= 0 {
		return nil, 0, Truncated("list length")
	}
	if n == 0 {
		return nil, pos, nil
	}
	l := make([]T, 0, min(n, uint64(len(src))))
	for range n {
		v, k, err := c.ec.Decode(src[pos:])
		if err != nil {
			return nil, 0, err
		}
		l = append(l, v)
		pos += k
	}
	return l, pos, nil
}
