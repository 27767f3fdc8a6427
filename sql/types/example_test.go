package types_test

import (
	"fmt"

	"github.com/eddystream/eddy/sql/types"
)

// Example builds Nexmark bid rows into an arena, reads them back, keys
// them, prints them as Flink's print connector and encodes them as JSON.
func Example() {
	bid := types.MustRowType(
		types.F("auction", types.BigInt().NotNull()),
		types.F("price", types.DecimalType(10, 2)),
		types.F("dateTime", types.TimestampType(3)),
		types.F("channel", types.String()),
	)
	arena := types.NewArena(0)
	w := types.NewRowWriter(bid, arena)

	w.SetInt64(0, 1001)
	if err := w.SetDecimal(1, types.MustParseDecimal("12.5")); err != nil {
		panic(err)
	}
	w.SetTimestampMillis(2, types.TimestampOf(2015, 7, 15, 8, 0, 0, 1000000).Millis)
	w.SetString(3, "Google")
	r := w.Finish() // the writer is reset: the next row starts all NULL

	fmt.Println(r.Int64(0), r.Decimal(1, 10, 2), r.String(3))
	fmt.Println(types.FormatRow(bid, r))
	fmt.Println(string(types.AppendText(nil, bid, r, 2, nil)))

	key := types.NewKeyEncoder(bid, 0, 3)
	fmt.Println(types.FormatRow(key.KeyType(), key.KeyRow(key.Key(r))))

	js, _ := types.AppendJSON(nil, bid, r, nil)
	fmt.Println(string(js))

	sum, _ := types.ArithmeticType(types.OpAdd, bid.FieldType(1), types.Int())
	fmt.Println(sum)
	// Output:
	// 1001 12.50 Google
	// +I[1001, 12.50, 2015-07-15T08:00:00.001, Google]
	// 2015-07-15 08:00:00.001
	// +I[1001, Google]
	// {"auction":1001,"price":12.50,"dateTime":"2015-07-15 08:00:00.001","channel":"Google"}
	// DECIMAL(13, 2)
}
