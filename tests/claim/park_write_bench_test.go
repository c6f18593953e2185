package claim

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// BenchmarkInsertRunParked measures InsertRun of one run due tomorrow in a
// parked-mode domain: into a new tenant (the insert that parks its empty
// partition on write) and into one tenant that already holds runs (the
// counter update alone). It runs unchanged against an older schema, so the
// insert path can be compared before and after park on write.
func BenchmarkInsertRunParked(b *testing.B) {
	for _, shape := range []struct {
		name      string
		newTenant bool
	}{{"new_tenant", true}, {"existing_tenant", false}} {
		b.Run(shape.name, func(b *testing.B) {
			e := testkit.NewClaimParked(b, 10)
			ctx := testkit.Context(b)
			wake := time.Now().Add(24 * time.Hour)
			i := 0
			for b.Loop() {
				i++
				tenant := "t"
				if shape.newTenant {
					tenant = fmt.Sprintf("t%08d", i)
				}
				if _, err := e.Client.InsertRun(ctx, docket.NewRun{RunID: fmt.Sprintf("r%08d", i), Scope: docket.Tenant(tenant),
					GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`), WakeAt: wake}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
