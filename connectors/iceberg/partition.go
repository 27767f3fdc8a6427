package iceberg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	icebergo "github.com/apache/iceberg-go"
	"github.com/twmb/murmur3"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// partitionKeyOption is the option declaring the partition transforms of a
// table the sink creates, named as Flink CDC's Iceberg sink names it.
const partitionKeyOption = "partition.key"

// partitionOptions are the sink's options about partitioning.
var partitionOptions = []connector.Option{
	{Key: partitionKeyOption, Type: connector.String,
		Description: "The partitioning of a table the sink creates, as Iceberg transforms of its columns separated by commas: " +
			"'region' or 'identity(region)', 'year(ts)', 'month(ts)', 'day(ts)', 'hour(ts)', 'bucket(16, id)' (or 'bucket[16](id)'), " +
			"'truncate(4, name)' (or 'truncate[4](name)'). Without it, the DDL's PARTITIONED BY columns are identity partitions. " +
			"An existing table is written with its own partitioning.",
		Check: func(v string) error { _, err := parsePartitionKey(v); return err }},
}

// partitionTerm is one field of a partitioning: a column and its transform.
type partitionTerm struct {
	column    string
	transform icebergo.Transform
}

// parsePartitionKey parses a 'partition.key' value: transforms of columns
// separated by commas (see partitionOptions).
func parsePartitionKey(s string) ([]partitionTerm, error) {
	var terms []partitionTerm
	depth, start := 0, 0
	var parts []string
	for i, r := range s {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	parts = append(parts, s[start:])
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, p := range parts {
		t, err := parsePartitionTerm(strings.TrimSpace(p))
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	return terms, nil
}

// parsePartitionTerm parses one transform of a column.
func parsePartitionTerm(p string) (partitionTerm, error) {
	bad := func(why string) (partitionTerm, error) {
		return partitionTerm{}, fmt.Errorf("partition term %q %s: write a column, or year(col), month(col), day(col), hour(col), bucket(16, col), truncate(4, col) or identity(col)", p, why)
	}
	if p == "" {
		return bad("is empty")
	}
	open := strings.IndexByte(p, '(')
	if open < 0 {
		if strings.ContainsAny(p, ")[] ") {
			return bad("is not a column name")
		}
		return partitionTerm{column: p, transform: icebergo.IdentityTransform{}}, nil
	}
	if !strings.HasSuffix(p, ")") {
		return bad("does not end with ')'")
	}
	name := strings.ToLower(strings.TrimSpace(p[:open]))
	args := strings.Split(p[open+1:len(p)-1], ",")
	for i := range args {
		args[i] = strings.TrimSpace(args[i])
	}
	width := func(arg string) (int, error) {
		n, err := strconv.Atoi(arg)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("partition term %q: %q is not a positive number", p, arg)
		}
		return n, nil
	}
	// The bracket form of Iceberg's transform names: bucket[16](id).
	if i := strings.IndexByte(name, '['); i >= 0 && strings.HasSuffix(name, "]") {
		if len(args) != 1 || args[0] == "" {
			return bad("takes one column")
		}
		n, err := width(name[i+1 : len(name)-1])
		if err != nil {
			return partitionTerm{}, err
		}
		switch name[:i] {
		case "bucket":
			return partitionTerm{column: args[0], transform: icebergo.BucketTransform{NumBuckets: n}}, nil
		case "truncate":
			return partitionTerm{column: args[0], transform: icebergo.TruncateTransform{Width: n}}, nil
		}
		return bad("has an unknown transform")
	}
	switch name {
	case "bucket", "truncate":
		if len(args) != 2 || args[1] == "" {
			return bad("takes a number and a column")
		}
		n, err := width(args[0])
		if err != nil {
			return partitionTerm{}, err
		}
		if name == "bucket" {
			return partitionTerm{column: args[1], transform: icebergo.BucketTransform{NumBuckets: n}}, nil
		}
		return partitionTerm{column: args[1], transform: icebergo.TruncateTransform{Width: n}}, nil
	}
	if len(args) != 1 || args[0] == "" {
		return bad("takes one column")
	}
	var tr icebergo.Transform
	switch name {
	case "identity":
		tr = icebergo.IdentityTransform{}
	case "year", "years":
		tr = icebergo.YearTransform{}
	case "month", "months":
		tr = icebergo.MonthTransform{}
	case "day", "days", "date":
		tr = icebergo.DayTransform{}
	case "hour", "hours", "date_hour":
		tr = icebergo.HourTransform{}
	default:
		return bad("has an unknown transform")
	}
	return partitionTerm{column: args[0], transform: tr}, nil
}

// partitionTermsOf returns the partitioning of a new table: the terms of
// partitionKey (a 'partition.key' value) or else identity partitions of
// the PARTITIONED BY columns of t.
func partitionTermsOf(t *connector.Table, partitionKey string) ([]partitionTerm, error) {
	terms, err := parsePartitionKey(partitionKey)
	if err != nil {
		return nil, err
	}
	if len(terms) > 0 {
		if len(t.PartitionKeys) > 0 {
			return nil, fmt.Errorf("the table is partitioned twice, by PARTITIONED BY and by '%s': declare the partitioning once (transforms need '%s')", partitionKeyOption, partitionKeyOption)
		}
		return terms, nil
	}
	for _, k := range t.PartitionKeys {
		terms = append(terms, partitionTerm{column: t.Schema.Field(k).Name, transform: icebergo.IdentityTransform{}})
	}
	return terms, nil
}

// partitionSpecOf builds the partition spec of terms over the schema sc,
// naming the fields as Iceberg does (id, id_bucket, name_trunc, ts_day, ...).
func partitionSpecOf(sc *icebergo.Schema, terms []partitionTerm) (icebergo.PartitionSpec, error) {
	if len(terms) == 0 {
		return *icebergo.UnpartitionedSpec, nil
	}
	opts := make([]icebergo.PartitionOption, 0, len(terms))
	for _, t := range terms {
		f, ok := sc.FindFieldByName(t.column)
		if !ok {
			f, ok = sc.FindFieldByNameCaseInsensitive(t.column)
		}
		if !ok {
			return icebergo.PartitionSpec{}, fmt.Errorf("partition column %q is not a column of the table: partition by one of its columns", t.column)
		}
		if !t.transform.CanTransform(f.Type) {
			return icebergo.PartitionSpec{}, fmt.Errorf("partition transform %s cannot apply to column %q of type %s: pick a transform of its type (year/month/day/hour need a date or timestamp, truncate an integer, decimal, string or binary)", t.transform, f.Name, f.Type)
		}
		name := f.Name
		switch tr := t.transform.(type) {
		case icebergo.BucketTransform:
			name += "_bucket"
			if tr.NumBuckets <= 0 {
				return icebergo.PartitionSpec{}, fmt.Errorf("partition transform %s of column %q needs a positive number of buckets", tr, f.Name)
			}
		case icebergo.TruncateTransform:
			name += "_trunc"
		case icebergo.YearTransform:
			name += "_year"
		case icebergo.MonthTransform:
			name += "_month"
		case icebergo.DayTransform:
			name += "_day"
		case icebergo.HourTransform:
			name += "_hour"
		}
		opts = append(opts, icebergo.AddPartitionFieldBySourceID(f.ID, name, t.transform, sc, nil))
	}
	spec, err := icebergo.NewPartitionSpecOpts(opts...)
	if err != nil {
		return icebergo.PartitionSpec{}, fmt.Errorf("partition spec: %w", err)
	}
	if err := checkDecimalFields(spec, sc); err != nil {
		return icebergo.PartitionSpec{}, err
	}
	return spec, nil
}

// checkDecimalFields refuses a spec with more than one decimal partition
// field, whose manifests iceberg-go cannot write.
func checkDecimalFields(spec icebergo.PartitionSpec, sc *icebergo.Schema) error {
	var decimals []string
	for _, pf := range spec.Fields() {
		if src, ok := sc.FindFieldByID(pf.SourceIDs[0]); ok {
			if _, ok := pf.Transform.ResultType(src.Type).(icebergo.DecimalType); ok {
				decimals = append(decimals, pf.Name)
			}
		}
	}
	if len(decimals) > 1 {
		return fmt.Errorf("partition fields %s are all decimals, and eddy writes at most one decimal partition field: partition by one of them, or bucket the others", strings.Join(decimals, ", "))
	}
	return nil
}

// partitionKey is a row's partition tuple, encoded as the bytes of the
// fields in spec order, each a presence byte (0 for NULL) and, when present,
// the length (uvarint) and Iceberg's single-value serialisation of the
// transformed value. It is a map key and travels in the key index and in
// fileMeta. The key of an unpartitioned table is "".
type partitionKey = string

// partitionField computes one field of the partition tuple from a row.
type partitionField struct {
	fieldID    int
	name       string
	col        int           // the eddy column of the source
	resultType icebergo.Type // the type of the transformed value
	// put appends the serialised transformed value of column col of a
	// row whose column is not NULL.
	put func(dst []byte, r types.Row, col int) []byte
}

// partitioner computes the partition tuples of rows, without allocating.
type partitioner struct {
	fields []partitionField
	buf    []byte
}

// newPartitioner returns the partitioner of the table's spec for eddy
// rows of type rt, or nil for an unpartitioned spec.
func newPartitioner(spec icebergo.PartitionSpec, sc *icebergo.Schema, rt *types.RowType) (*partitioner, error) {
	if spec.IsUnpartitioned() {
		return nil, nil
	}
	if err := checkDecimalFields(spec, sc); err != nil {
		return nil, err
	}
	p := &partitioner{}
	for _, pf := range spec.Fields() {
		src, ok := sc.FindFieldByID(pf.SourceIDs[0])
		if !ok || len(pf.SourceIDs) != 1 {
			return nil, fmt.Errorf("partition field %q has no single source column in the table", pf.Name)
		}
		col, ok := rt.Index(src.Name)
		if !ok {
			return nil, fmt.Errorf("the table is partitioned by column %q (partition field %q), which the DDL lacks: add it to the DDL", src.Name, pf.Name)
		}
		put, err := partitionPut(pf.Transform, rt.Field(col).Type, src.Type)
		if err != nil {
			return nil, fmt.Errorf("partition field %q (%s of column %q): %w", pf.Name, pf.Transform, src.Name, err)
		}
		p.fields = append(p.fields, partitionField{fieldID: pf.FieldID, name: pf.Name, col: col, resultType: pf.Transform.ResultType(src.Type), put: put})
	}
	return p, nil
}

// key returns the partition tuple of r. The bytes are valid until the next
// call; string(key) is the partitionKey.
func (p *partitioner) key(r types.Row) []byte {
	b := p.buf[:0]
	for i := range p.fields {
		f := &p.fields[i]
		if r.IsNull(f.col) {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		// Reserve one length byte; values are short, longer ones shift.
		at := len(b)
		b = append(b, 0)
		b = f.put(b, r, f.col)
		n := len(b) - at - 1
		if n < 0x80 {
			b[at] = byte(n)
		} else {
			var l [binary.MaxVarintLen64]byte
			k := binary.PutUvarint(l[:], uint64(n))
			b = append(b, l[:k-1]...)
			copy(b[at+k:], b[at+1:at+1+n])
			copy(b[at:], l[:k])
		}
	}
	p.buf = b
	return b
}

// values returns the partition values of key by partition field id, as
// iceberg-go's manifests take them.
func (p *partitioner) values(key partitionKey) (map[int]any, error) {
	return partitionValues(key, p.fieldTypes())
}

// fieldTypes returns the field ids and result types of the partition fields.
func (p *partitioner) fieldTypes() []partitionFieldType {
	out := make([]partitionFieldType, len(p.fields))
	for i, f := range p.fields {
		out[i] = partitionFieldType{id: f.fieldID, typ: f.resultType}
	}
	return out
}

// partitionFieldType is a partition field's id and result type.
type partitionFieldType struct {
	id  int
	typ icebergo.Type
}

// specFieldTypes returns the field ids and result types of a spec's fields.
func specFieldTypes(spec icebergo.PartitionSpec, sc *icebergo.Schema) ([]partitionFieldType, error) {
	var out []partitionFieldType
	for _, pf := range spec.Fields() {
		src, ok := sc.FindFieldByID(pf.SourceIDs[0])
		if !ok {
			return nil, fmt.Errorf("partition field %q: source column %d is not in the schema", pf.Name, pf.SourceIDs[0])
		}
		out = append(out, partitionFieldType{id: pf.FieldID, typ: pf.Transform.ResultType(src.Type)})
	}
	return out, nil
}

// splitPartitionKey returns the serialised values of key's fields (nil for
// NULL).
func splitPartitionKey(key partitionKey, n int) ([][]byte, error) {
	out := make([][]byte, 0, n)
	b := []byte(key)
	for len(b) > 0 {
		if b[0] == 0 {
			out = append(out, nil)
			b = b[1:]
			continue
		}
		l, k := binary.Uvarint(b[1:])
		if k <= 0 || uint64(len(b)-1-k) < l {
			return nil, errors.New("iceberg: partition tuple is corrupt")
		}
		out = append(out, b[1+k:1+k+int(l)])
		b = b[1+k+int(l):]
	}
	if len(out) != n {
		return nil, fmt.Errorf("iceberg: partition tuple has %d fields, the table's spec %d", len(out), n)
	}
	return out, nil
}

// partitionValues decodes key into values by field id.
func partitionValues(key partitionKey, fields []partitionFieldType) (map[int]any, error) {
	vals, err := splitPartitionKey(key, len(fields))
	if err != nil {
		return nil, err
	}
	out := make(map[int]any, len(fields))
	for i, f := range fields {
		if vals[i] == nil {
			out[f.id] = nil
			continue
		}
		lit, err := icebergo.LiteralFromBytes(f.typ, vals[i])
		if err != nil {
			return nil, fmt.Errorf("iceberg: partition field %d: %w", f.id, err)
		}
		out[f.id] = lit.Any()
	}
	return out, nil
}

// partitionPut returns the function appending the serialised transform tr
// of a column of eddy type t stored as the Iceberg type it.
func partitionPut(tr icebergo.Transform, t types.Type, it icebergo.Type) (func([]byte, types.Row, int) []byte, error) {
	long, err := longOf(t, it)
	if err != nil {
		return nil, err
	}
	switch tr := tr.(type) {
	case icebergo.IdentityTransform:
		return identityPut(t, it)
	case icebergo.BucketTransform:
		n := uint32(tr.NumBuckets)
		bucket := func(dst []byte, h uint32) []byte {
			return binary.LittleEndian.AppendUint32(dst, (h&math.MaxInt32)%n)
		}
		switch {
		case long != nil:
			if _, ns := it.(icebergo.TimestampNsType); ns {
				return func(dst []byte, r types.Row, c int) []byte {
					return bucket(dst, hashLong(floorDiv(long(r, c), 1000)))
				}, nil
			}
			if _, ns := it.(icebergo.TimestampTzNsType); ns {
				return func(dst []byte, r types.Row, c int) []byte {
					return bucket(dst, hashLong(floorDiv(long(r, c), 1000)))
				}, nil
			}
			return func(dst []byte, r types.Row, c int) []byte { return bucket(dst, hashLong(long(r, c))) }, nil
		case isKind(t, types.KindChar, types.KindVarChar):
			return func(dst []byte, r types.Row, c int) []byte { return bucket(dst, murmur3.StringSum32(r.String(c))) }, nil
		case isKind(t, types.KindBinary, types.KindVarBinary):
			return func(dst []byte, r types.Row, c int) []byte {
				return bucket(dst, murmur3.StringSum32(r.BinaryString(c)))
			}, nil
		case isKind(t, types.KindDecimal):
			dec := decimalPut(t, it)
			var scratch []byte
			return func(dst []byte, r types.Row, c int) []byte {
				scratch = dec(scratch[:0], r, c)
				return bucket(dst, murmur3.Sum32(scratch))
			}, nil
		}
	case icebergo.TruncateTransform:
		w := int64(tr.Width)
		switch {
		case isKind(t, types.KindTinyInt, types.KindSmallInt, types.KindInt):
			return func(dst []byte, r types.Row, c int) []byte {
				v := r.Int64(c)
				return binary.LittleEndian.AppendUint32(dst, uint32(int32(v-floorMod(v, w))))
			}, nil
		case isKind(t, types.KindBigInt):
			return func(dst []byte, r types.Row, c int) []byte {
				v := r.Int64(c)
				return binary.LittleEndian.AppendUint64(dst, uint64(v-floorMod(v, w)))
			}, nil
		case isKind(t, types.KindChar, types.KindVarChar):
			return func(dst []byte, r types.Row, c int) []byte { return append(dst, truncateRunes(r.String(c), int(w))...) }, nil
		case isKind(t, types.KindBinary, types.KindVarBinary):
			return func(dst []byte, r types.Row, c int) []byte {
				s := r.BinaryString(c)
				return append(dst, s[:min(len(s), int(w))]...)
			}, nil
		case isKind(t, types.KindDecimal):
			dt, ok := it.(icebergo.DecimalType)
			if !ok {
				break
			}
			p, sc := t.Precision(), t.Scale()
			bw := big.NewInt(w)
			return func(dst []byte, r types.Row, c int) []byte {
				d := r.Decimal(c, p, sc)
				if d.Scale() != dt.Scale() {
					d = d.Rescale(dt.Scale())
				}
				if u, ok := d.Unscaled(); ok {
					return appendMinimalBigEndian(dst, big.NewInt(u-floorMod(u, w)))
				}
				u := d.BigUnscaled()
				m := new(big.Int).Mod(u, bw) // Euclidean: non-negative for w > 0
				return appendMinimalBigEndian(dst, u.Sub(u, m))
			}, nil
		}
	case icebergo.YearTransform, icebergo.MonthTransform, icebergo.DayTransform, icebergo.HourTransform:
		days, hours, err := timeUnits(t, it)
		if err != nil {
			return nil, err
		}
		var f func(r types.Row, c int) int32
		switch tr.(type) {
		case icebergo.YearTransform:
			f = func(r types.Row, c int) int32 { y, _, _ := types.Date(days(r, c)).Civil(); return int32(y - 1970) }
		case icebergo.MonthTransform:
			f = func(r types.Row, c int) int32 {
				y, m, _ := types.Date(days(r, c)).Civil()
				return int32((y-1970)*12 + m - 1)
			}
		case icebergo.DayTransform:
			f = func(r types.Row, c int) int32 { return int32(days(r, c)) }
		default:
			if hours == nil {
				return nil, fmt.Errorf("the hour transform needs a timestamp, not %s", t)
			}
			f = func(r types.Row, c int) int32 { return int32(hours(r, c)) }
		}
		return func(dst []byte, r types.Row, c int) []byte {
			return binary.LittleEndian.AppendUint32(dst, uint32(f(r, c)))
		}, nil
	}
	return nil, fmt.Errorf("eddy cannot compute this transform of a %s column", t)
}

// isKind reports whether t is of one of the kinds.
func isKind(t types.Type, kinds ...types.Kind) bool {
	for _, k := range kinds {
		if t.Kind() == k {
			return true
		}
	}
	return false
}

// longOf returns, for a column whose Iceberg bucket hash is that of a long
// (integers, dates, times, timestamps), the function reading that long:
// the integer, days, microseconds of the day, or micro- or nanoseconds
// since the epoch as the Iceberg type stores them. Others get nil.
func longOf(t types.Type, it icebergo.Type) (func(types.Row, int) int64, error) {
	switch t.Kind() {
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		return types.Row.Int64, nil
	case types.KindDate:
		return func(r types.Row, c int) int64 { return int64(r.Date(c)) }, nil
	case types.KindTime:
		return func(r types.Row, c int) int64 { return int64(r.Time(c)) / 1000 }, nil
	case types.KindTimestamp, types.KindTimestampLTZ:
		p := t.Precision()
		switch it.(type) {
		case icebergo.TimestampNsType, icebergo.TimestampTzNsType:
			return func(r types.Row, c int) int64 {
				ts := r.Timestamp(c, p)
				return ts.Millis*types.NanosPerMilli + int64(ts.NanoOfMilli)
			}, nil
		}
		return func(r types.Row, c int) int64 {
			ts := r.Timestamp(c, p)
			return ts.Millis*1000 + int64(ts.NanoOfMilli/1000)
		}, nil
	}
	return nil, nil
}

// timeUnits returns the functions reading the days (and, for timestamps,
// hours) since the epoch of a date or timestamp column.
func timeUnits(t types.Type, it icebergo.Type) (days, hours func(types.Row, int) int64, err error) {
	switch t.Kind() {
	case types.KindDate:
		return func(r types.Row, c int) int64 { return int64(r.Date(c)) }, nil, nil
	case types.KindTimestamp, types.KindTimestampLTZ:
		p := t.Precision()
		days = func(r types.Row, c int) int64 { return floorDiv(r.Timestamp(c, p).Millis, types.MillisPerDay) }
		hours = func(r types.Row, c int) int64 { return floorDiv(r.Timestamp(c, p).Millis, types.MillisPerHour) }
		return days, hours, nil
	}
	return nil, nil, fmt.Errorf("year, month, day and hour transforms need a date or timestamp, not %s", t)
}

// identityPut returns the function appending the single-value
// serialisation of a column's value.
func identityPut(t types.Type, it icebergo.Type) (func([]byte, types.Row, int) []byte, error) {
	switch t.Kind() {
	case types.KindBoolean:
		return func(dst []byte, r types.Row, c int) []byte {
			if r.Bool(c) {
				return append(dst, 1)
			}
			return append(dst, 0)
		}, nil
	case types.KindTinyInt, types.KindSmallInt, types.KindInt:
		if _, ok := it.(icebergo.Int64Type); ok {
			break
		}
		return func(dst []byte, r types.Row, c int) []byte {
			return binary.LittleEndian.AppendUint32(dst, uint32(int32(r.Int64(c))))
		}, nil
	case types.KindDate:
		return func(dst []byte, r types.Row, c int) []byte {
			return binary.LittleEndian.AppendUint32(dst, uint32(int32(r.Date(c))))
		}, nil
	case types.KindFloat:
		if _, ok := it.(icebergo.Float64Type); ok {
			return func(dst []byte, r types.Row, c int) []byte {
				return binary.LittleEndian.AppendUint64(dst, math.Float64bits(float64(r.Float32(c))))
			}, nil
		}
		return func(dst []byte, r types.Row, c int) []byte {
			return binary.LittleEndian.AppendUint32(dst, math.Float32bits(r.Float32(c)))
		}, nil
	case types.KindDouble:
		return func(dst []byte, r types.Row, c int) []byte {
			return binary.LittleEndian.AppendUint64(dst, math.Float64bits(r.Float64(c)))
		}, nil
	case types.KindChar, types.KindVarChar:
		return func(dst []byte, r types.Row, c int) []byte { return append(dst, r.String(c)...) }, nil
	case types.KindBinary, types.KindVarBinary:
		return func(dst []byte, r types.Row, c int) []byte { return append(dst, r.BinaryString(c)...) }, nil
	case types.KindDecimal:
		return decimalPut(t, it), nil
	}
	long, err := longOf(t, it)
	if err != nil || long == nil {
		return nil, fmt.Errorf("a %s column cannot be a partition source", t)
	}
	return func(dst []byte, r types.Row, c int) []byte {
		return binary.LittleEndian.AppendUint64(dst, uint64(long(r, c)))
	}, nil
}

// decimalPut returns the function appending the unscaled value of a
// decimal column, at the Iceberg type's scale, as minimal big-endian two's
// complement bytes (Iceberg's serialisation, and what its bucket hashes).
func decimalPut(t types.Type, it icebergo.Type) func([]byte, types.Row, int) []byte {
	p, sc := t.Precision(), t.Scale()
	want := sc
	if dt, ok := it.(icebergo.DecimalType); ok {
		want = dt.Scale()
	}
	var tmp big.Int
	return func(dst []byte, r types.Row, c int) []byte {
		d := r.Decimal(c, p, sc)
		if d.Scale() != want {
			d = d.Rescale(want)
		}
		if u, ok := d.Unscaled(); ok {
			return appendMinimalInt64(dst, u)
		}
		tmp.Set(d.BigUnscaled())
		return appendMinimalBigEndian(dst, &tmp)
	}
}

// appendMinimalInt64 appends v as the fewest big-endian two's complement
// bytes that hold it.
func appendMinimalInt64(dst []byte, v int64) []byte {
	n := 8
	for n > 1 {
		top := byte(v >> (8 * (n - 1)))
		next := byte(v >> (8 * (n - 2)))
		if (top == 0 && next&0x80 == 0) || (top == 0xff && next&0x80 != 0) {
			n--
			continue
		}
		break
	}
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(v>>(8*i)))
	}
	return dst
}

// appendMinimalBigEndian appends v as minimal big-endian two's complement.
func appendMinimalBigEndian(dst []byte, v *big.Int) []byte {
	if v.IsInt64() {
		return appendMinimalInt64(dst, v.Int64())
	}
	n := v.BitLen()/8 + 1
	b := make([]byte, n)
	if v.Sign() >= 0 {
		v.FillBytes(b)
	} else {
		// Two's complement of a negative number: 2^(8n) + v.
		m := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
		m.Add(m, v)
		m.FillBytes(b)
	}
	for len(b) > 1 && ((b[0] == 0 && b[1]&0x80 == 0) || (b[0] == 0xff && b[1]&0x80 != 0)) {
		b = b[1:]
	}
	return append(dst, b...)
}

// hashLong is Iceberg's bucket hash of a long: murmur3 (32 bits) of its 8
// little-endian bytes.
func hashLong(v int64) uint32 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	return murmur3.Sum32(b[:])
}

// truncateRunes returns the first n code points of s.
func truncateRunes(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
