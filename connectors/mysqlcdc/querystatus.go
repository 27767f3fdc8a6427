package mysqlcdc

import "encoding/binary"

// queryStatus is what a statement's QUERY event says of the session that
// ran it, from the event's status variables: what the statement's text
// means depends on them.
type queryStatus struct {
	// sqlMode is the session's sql_mode, as the server's bits (MySQL's
	// and MariaDB's agree on those the source reads); known tells
	// whether the event carried it.
	sqlMode uint64
	known   bool
	// clientCollation is the id of the collation of character_set_client,
	// in which the statement's text is written; -1 if not logged.
	clientCollation int
	// explicitTimestamps is MySQL's explicit_defaults_for_timestamp of
	// the session: 1 or 0, or -1 where the event does not say.
	explicitTimestamps int
}

// The status variables of a QUERY event the source reads or steps over,
// as the servers number them.
const (
	qFlags2           = 0
	qSQLMode          = 1
	qCatalog          = 2
	qAutoIncrement    = 3
	qCharset          = 4
	qTimeZone         = 5
	qCatalogNZ        = 6
	qLCTimeNames      = 7
	qCharsetDatabase  = 8
	qTableMapForUpd   = 9
	qMasterData       = 10
	qInvoker          = 11
	qUpdatedDBNames   = 12
	qMicroseconds     = 13
	qExplicitDefaults = 16
	qDDLLoggedWithXID = 17
	qDefaultUTF8MB4   = 18
	qRequirePK        = 19
	qTableEncryption  = 20
	qMariaDBHRNow     = 128
	qMariaDBXID       = 129
	qMariaDBGTIDFlags = 130
)

// parseQueryStatus reads the status variables of a QUERY event. They are
// a sequence of codes, each followed by a value whose length its code
// fixes: reading stops at a code the source does not know, what follows
// it staying unknown.
func parseQueryStatus(b []byte) queryStatus {
	st := queryStatus{clientCollation: -1, explicitTimestamps: -1}
	fixed := func(n int) ([]byte, bool) {
		if len(b) < n {
			return nil, false
		}
		v := b[:n]
		b = b[n:]
		return v, true
	}
	lenString := func() bool {
		if len(b) < 1 || len(b) < 1+int(b[0]) {
			return false
		}
		b = b[1+int(b[0]):]
		return true
	}
	for len(b) > 0 {
		code := b[0]
		b = b[1:]
		ok := true
		switch code {
		case qFlags2, qAutoIncrement, qMasterData:
			_, ok = fixed(4)
		case qSQLMode:
			var v []byte
			if v, ok = fixed(8); ok {
				st.sqlMode, st.known = binary.LittleEndian.Uint64(v), true
			}
		case qCatalog:
			// A length, the name and a terminating zero.
			if ok = len(b) >= 1 && len(b) >= 2+int(b[0]); ok {
				b = b[2+int(b[0]):]
			}
		case qCharset:
			var v []byte
			if v, ok = fixed(6); ok {
				st.clientCollation = int(binary.LittleEndian.Uint16(v))
			}
		case qTimeZone, qCatalogNZ:
			ok = lenString()
		case qLCTimeNames, qCharsetDatabase, qDefaultUTF8MB4:
			_, ok = fixed(2)
		case qTableMapForUpd, qDDLLoggedWithXID, qMariaDBXID:
			_, ok = fixed(8)
		case qInvoker:
			ok = lenString() && lenString()
		case qUpdatedDBNames:
			if ok = len(b) >= 1; !ok {
				break
			}
			n := int(b[0])
			b = b[1:]
			if n == 254 { // more databases than are listed: none are
				break
			}
			for i := 0; i < n && ok; i++ {
				end := 0
				for end < len(b) && b[end] != 0 {
					end++
				}
				if ok = end < len(b); ok {
					b = b[end+1:]
				}
			}
		case qMicroseconds, qMariaDBHRNow:
			_, ok = fixed(3)
		case qRequirePK, qTableEncryption, qMariaDBGTIDFlags:
			_, ok = fixed(1)
		case qExplicitDefaults:
			var v []byte
			if v, ok = fixed(1); ok {
				st.explicitTimestamps = int(v[0])
			}
		default:
			return st
		}
		if !ok {
			return st
		}
	}
	return st
}
