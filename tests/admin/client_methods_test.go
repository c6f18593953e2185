package admin

import (
	"reflect"
	"testing"

	"github.com/docketrun/docket-go/docket"
)

// Client's doc says it offers every method of Admin: each exported method of
// *Admin is a method of *Client with the same signature.
func TestClientOffersEveryAdminMethod(t *testing.T) {
	t.Parallel()
	admin, client := reflect.TypeFor[*docket.Admin](), reflect.TypeFor[*docket.Client]()
	for i := range admin.NumMethod() {
		m := admin.Method(i)
		c, ok := client.MethodByName(m.Name)
		switch {
		case !ok:
			t.Errorf("Admin.%s is not a method of Client", m.Name)
		case c.Type.NumIn() != m.Type.NumIn() || c.Type.String()[len("func(*docket.Client"):] != m.Type.String()[len("func(*docket.Admin"):]:
			t.Errorf("Client.%s is %s, Admin.%s is %s", m.Name, c.Type, m.Name, m.Type)
		}
	}
}
