package mysqlcdc

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/pingcap/tidb/pkg/parser/ast"
	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"
	ptypes "github.com/pingcap/tidb/pkg/parser/types"
)

// serverFacts are what the source needs to know of the server to declare
// a column of a statement as information_schema would: read once, on the
// reader's connection, from what does not change while the server runs.
type serverFacts struct {
	mariaDB bool
	// intWidths tells whether COLUMN_TYPE shows integers' display widths
	// (int(11)): MariaDB's and MySQL's before 8.0.19 do.
	intWidths bool
	// explicitTimestamps is @@GLOBAL.explicit_defaults_for_timestamp: a
	// TIMESTAMP column declared without NULL is NOT NULL where it is off.
	explicitTimestamps bool
	// charsetOf gives a collation's character set; defaultCollation a
	// character set's default collation; collationByID a collation's
	// name by its id.
	charsetOf        map[string]string
	defaultCollation map[string]string
	collationByID    map[int]string
}

// readServerFacts reads the server's collations and the settings that
// shape its columns.
func readServerFacts(conn *client.Conn) (*serverFacts, error) {
	f := &serverFacts{mariaDB: isMariaDB(conn), charsetOf: map[string]string{}, defaultCollation: map[string]string{}, collationByID: map[int]string{}}
	f.intWidths = f.mariaDB
	if !f.mariaDB {
		if c, err := conn.CompareServerVersion("8.0.19"); err != nil || c < 0 {
			f.intWidths = true
		}
	}
	r, err := conn.Execute("SELECT COLLATION_NAME, CHARACTER_SET_NAME, ID, IS_DEFAULT FROM information_schema.COLLATIONS")
	if err != nil {
		return nil, fmt.Errorf("mysql-cdc: reading the server's collations (information_schema.COLLATIONS): %w", err)
	}
	for i := 0; i < r.RowNumber(); i++ {
		name, cs := strings.ToLower(text(r, i, 0)), strings.ToLower(text(r, i, 1))
		if name == "" || cs == "" {
			continue
		}
		f.charsetOf[name] = cs
		if id, err := strconv.Atoi(text(r, i, 2)); err == nil {
			f.collationByID[id] = name
		}
		if strings.EqualFold(text(r, i, 3), "Yes") {
			f.defaultCollation[cs] = name
		}
	}
	r.Close()
	v, err := conn.Execute("SELECT @@GLOBAL.explicit_defaults_for_timestamp")
	if err != nil {
		return nil, fmt.Errorf("mysql-cdc: reading @@GLOBAL.explicit_defaults_for_timestamp: %w", err)
	}
	f.explicitTimestamps = text(v, 0, 0) == "1" || strings.EqualFold(text(v, 0, 0), "ON")
	v.Close()
	return f, nil
}

// collation returns the server's name of a collation, which a statement
// may give by an alias (utf8_bin for utf8mb3_bin), or "".
func (f *serverFacts) collation(name string) string {
	name = strings.ToLower(name)
	if _, ok := f.charsetOf[name]; ok {
		return name
	}
	for _, alias := range [][2]string{{"utf8_", "utf8mb3_"}, {"utf8mb3_", "utf8_"}} {
		if rest, ok := strings.CutPrefix(name, alias[0]); ok {
			if _, ok := f.charsetOf[alias[1]+rest]; ok {
				return alias[1] + rest
			}
		}
	}
	return ""
}

// charsetDefault returns the default collation of a character set, which
// a statement may give by an alias (utf8 for utf8mb3), or "".
func (f *serverFacts) charsetDefault(cs string) string {
	cs = strings.ToLower(cs)
	if c, ok := f.defaultCollation[cs]; ok {
		return c
	}
	switch cs {
	case "utf8":
		return f.defaultCollation["utf8mb3"]
	case "utf8mb3":
		return f.defaultCollation["utf8"]
	}
	return ""
}

// utf8Client tells whether a statement written in the collation of id is
// UTF-8 text, as the source reads it.
func (f *serverFacts) utf8Client(id int) bool {
	switch f.charsetOf[f.collationByID[id]] {
	case "utf8mb4", "utf8mb3", "utf8":
		return true
	}
	return false
}

// textCollation returns the character set and collation of a text column
// declared with the character set cs and the collation coll (either may be
// ""), in a table of the default collation tableCollation; binary is the
// BINARY attribute (CHAR(5) BINARY: the character set's binary
// collation). ok is false where the source cannot tell.
func (f *serverFacts) textCollation(cs, coll string, binary bool, tableCollation string) (charset, collation string, ok bool) {
	switch {
	case coll != "":
		collation = f.collation(coll)
	case cs != "":
		collation = f.charsetDefault(cs)
	default:
		collation = f.collation(tableCollation)
	}
	if collation == "" {
		return "", "", false
	}
	charset = f.charsetOf[collation]
	if cs != "" && f.charsetDefault(cs) != "" && f.charsetOf[f.charsetDefault(cs)] != charset {
		return "", "", false // a collation of another character set: the server refused it
	}
	if binary {
		if collation = f.collation(charset + "_bin"); collation == "" {
			return "", "", false
		}
	}
	return charset, collation, charset != "" && charset != "binary"
}

// memberEscapes escapes the members of an ENUM or SET as COLUMN_TYPE
// shows them (the server's append_unescaped).
var memberEscapes = strings.NewReplacer("'", "''", `\`, `\\`, "\x00", `\0`, "\n", `\n`, "\r", `\r`)

// intWidth is the display width COLUMN_TYPE shows for an integer type
// declared without one.
func intWidth(tp byte, unsigned bool) int {
	w := map[byte][2]int{
		pmysql.TypeTiny:     {4, 3},
		pmysql.TypeShort:    {6, 5},
		pmysql.TypeInt24:    {9, 8},
		pmysql.TypeLong:     {11, 10},
		pmysql.TypeLonglong: {20, 20},
	}[tp]
	if unsigned {
		return w[1]
	}
	return w[0]
}

// declared is a column of a statement as information_schema would
// describe it, and what the declaration says of the table's keys.
type declared struct {
	col column
	// pk is set for a column declared PRIMARY KEY.
	pk bool
}

// columnOf declares a column of a statement, in a table of the default
// collation tableCollation, as information_schema would describe it; why
// says, where the source cannot tell, what it cannot (the table is then
// described from the server).
func (f *serverFacts) columnOf(def *ast.ColumnDef, tableCollation string, st queryStatus) (d declared, why string) {
	ft := def.Tp
	if ft == nil {
		return d, "a column without a type"
	}
	c := column{name: def.Name.Name.O}
	nullSaid := false
	var coll string
	for _, o := range def.Options {
		switch o.Tp {
		case ast.ColumnOptionNotNull:
			c.notNull, nullSaid = true, true
		case ast.ColumnOptionNull:
			c.notNull, nullSaid = false, true
		case ast.ColumnOptionPrimaryKey:
			d.pk, c.notNull = true, true
		case ast.ColumnOptionCollate:
			coll = o.StrValue
		case ast.ColumnOptionDefaultValue, ast.ColumnOptionUniqKey, ast.ColumnOptionOnUpdate, ast.ColumnOptionComment,
			ast.ColumnOptionCheck, ast.ColumnOptionReference, ast.ColumnOptionColumnFormat, ast.ColumnOptionStorage,
			ast.ColumnOptionAutoIncrement, ast.ColumnOptionFulltext:
		default:
			return d, fmt.Sprintf("column %s is generated, or has an option the source does not follow", c.name)
		}
	}
	if coll == "" {
		coll = ft.GetCollate()
	}
	flag := ft.GetFlag()
	c.unsigned = pmysql.HasUnsignedFlag(flag)
	suffix := ""
	if c.unsigned {
		suffix = " unsigned"
	}
	if pmysql.HasZerofillFlag(flag) {
		suffix += " zerofill"
	}
	flen, dec := ft.GetFlen(), ft.GetDecimal()
	binaryCS := strings.EqualFold(ft.GetCharset(), "binary")
	text := func(dataType, columnType string) string {
		cs, cl, ok := f.textCollation(ft.GetCharset(), coll, pmysql.HasBinaryFlag(flag), tableCollation)
		if !ok {
			return fmt.Sprintf("the character set or collation of column %s", c.name)
		}
		c.dataType, c.columnType, c.charset, c.collation = dataType, columnType, cs, cl
		return ""
	}
	tp := ft.GetType()
	switch tp {
	case pmysql.TypeTiny, pmysql.TypeShort, pmysql.TypeInt24, pmysql.TypeLong, pmysql.TypeLonglong:
		c.dataType = ptypes.TypeStr(tp)
		c.columnType = c.dataType
		if flen == ptypes.UnspecifiedLength && f.intWidths {
			flen = intWidth(tp, c.unsigned)
		}
		if flen != ptypes.UnspecifiedLength && (f.intWidths || pmysql.HasZerofillFlag(flag) || (tp == pmysql.TypeTiny && flen == 1)) {
			c.columnType += "(" + strconv.Itoa(flen) + ")"
		}
		c.columnType += suffix
	case pmysql.TypeFloat, pmysql.TypeDouble:
		c.dataType = ptypes.TypeStr(tp)
		c.columnType = c.dataType
		if dec != ptypes.UnspecifiedLength && flen != ptypes.UnspecifiedLength {
			c.columnType += fmt.Sprintf("(%d,%d)", flen, dec)
		}
		c.columnType += suffix
	case pmysql.TypeNewDecimal:
		if flen == ptypes.UnspecifiedLength {
			flen = 10
		}
		if dec == ptypes.UnspecifiedLength {
			dec = 0
		}
		c.dataType, c.columnType = "decimal", fmt.Sprintf("decimal(%d,%d)%s", flen, dec, suffix)
	case pmysql.TypeBit:
		if flen == ptypes.UnspecifiedLength {
			flen = 1
		}
		c.dataType, c.columnType, c.unsigned = "bit", fmt.Sprintf("bit(%d)", flen), false
	case pmysql.TypeYear:
		if flen != ptypes.UnspecifiedLength && flen != 4 {
			return d, fmt.Sprintf("column %s is a YEAR(%d)", c.name, flen)
		}
		c.dataType, c.columnType, c.unsigned = "year", "year", false
		if f.intWidths {
			c.columnType = "year(4)"
		}
	case pmysql.TypeDate:
		c.dataType, c.columnType = "date", "date"
	case pmysql.TypeDuration, pmysql.TypeDatetime, pmysql.TypeTimestamp:
		c.dataType = ptypes.TypeStr(tp)
		c.columnType = c.dataType
		if dec > 0 {
			c.columnType += "(" + strconv.Itoa(dec) + ")"
		}
		if tp == pmysql.TypeTimestamp && !nullSaid && !c.notNull {
			explicit := f.explicitTimestamps
			if st.explicitTimestamps >= 0 {
				explicit = st.explicitTimestamps == 1
			}
			c.notNull = !explicit
		}
	case pmysql.TypeString, pmysql.TypeVarchar:
		if flen == ptypes.UnspecifiedLength {
			if tp == pmysql.TypeVarchar {
				return d, fmt.Sprintf("column %s is a VARCHAR without a length", c.name)
			}
			flen = 1
		}
		name := ptypes.TypeStr(tp)
		if binaryCS {
			name = strings.Replace(name, "char", "binary", 1)
			c.dataType, c.columnType = name, fmt.Sprintf("%s(%d)", name, flen)
			break
		}
		if why := text(name, fmt.Sprintf("%s(%d)", name, flen)); why != "" {
			return d, why
		}
	case pmysql.TypeTinyBlob, pmysql.TypeBlob, pmysql.TypeMediumBlob, pmysql.TypeLongBlob:
		if flen != ptypes.UnspecifiedLength {
			// TEXT(n) and BLOB(n) are the smallest type that holds n.
			return d, fmt.Sprintf("column %s is declared with a length", c.name)
		}
		name := ptypes.TypeStr(tp)
		if binaryCS {
			name = strings.Replace(name, "text", "blob", 1)
			c.dataType, c.columnType = name, name
			break
		}
		if why := text(name, name); why != "" {
			return d, why
		}
	case pmysql.TypeEnum, pmysql.TypeSet:
		if binaryCS {
			return d, fmt.Sprintf("column %s is an ENUM or SET of binary strings", c.name)
		}
		name := ptypes.TypeStr(tp)
		c.values = append([]string(nil), ft.GetElems()...)
		var b strings.Builder
		b.WriteString(name + "(")
		for i, v := range c.values {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("'" + memberEscapes.Replace(v) + "'")
		}
		b.WriteByte(')')
		if why := text(name, b.String()); why != "" {
			return d, why
		}
	case pmysql.TypeJSON:
		c.dataType, c.columnType = "json", "json"
		if f.mariaDB {
			// MariaDB's JSON is a LONGTEXT of utf8mb4_bin.
			c.dataType, c.columnType = "longtext", "longtext"
			c.charset, c.collation = "utf8mb4", "utf8mb4_bin"
		}
	default:
		return d, fmt.Sprintf("column %s is of a type the source does not follow (%s)", c.name, ptypes.TypeStr(tp))
	}
	d.col = c
	return d, ""
}
