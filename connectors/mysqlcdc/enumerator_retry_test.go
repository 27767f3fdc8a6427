package mysqlcdc

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	perrors "github.com/pingcap/errors"
)

// TestDroppedConnectionIsRetried checks what the enumerator's discovery
// retries on: a connection the server dropped, as go-mysql reports it
// under eddy's wrapping, is mysql.ErrBadConn; a server's error is not.
func TestDroppedConnectionIsRetried(t *testing.T) {
	dropped := fmt.Errorf("mysql-cdc: listing tables: %w", perrors.Wrapf(mysql.ErrBadConn, "io.ReadFull(header) failed. err %v", "EOF"))
	if !errors.Is(dropped, mysql.ErrBadConn) {
		t.Fatalf("%v is not taken for a dropped connection", dropped)
	}
	refused := fmt.Errorf("mysql-cdc: listing tables: %w", mysql.NewError(mysql.ER_TABLEACCESS_DENIED_ERROR, "denied"))
	if errors.Is(refused, mysql.ErrBadConn) {
		t.Fatalf("%v is taken for a dropped connection", refused)
	}
}
