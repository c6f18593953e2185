// Package console is Docket's operator console: server-rendered HTML pages
// of one fairness domain (its policy and cursor, every partition, the ring,
// the runs) that an application mounts on its own mux under a prefix.
// Everything is readable with JavaScript off; a few lines of script only
// refresh the domain page's live section. Templates, the style sheet and the
// script are embedded: the console loads nothing from elsewhere.
//
// The console is read-only unless Config.AllowWrites is set. Then it offers
// cap override edits (compare-and-set on the partition version) and run
// actions (cancel, resume, retry a poisoned run, retry a failed or cancelled
// run), each a POST carrying a CSRF token that the handler verifies before
// anything else; a refused write changes nothing.
//
// The console has no login of its own. The application authenticates and
// authorizes operators by wrapping the handler in its own middleware, which
// then guards every page and every action alike:
//
//	h, err := console.New(ctx, console.Config{
//		Pool:        pool,
//		Schema:      "docket",
//		Prefix:      "/ops/docket",
//		AllowWrites: true,
//	})
//	if err != nil {
//		return err
//	}
//	mux.Handle("/ops/docket/", requireOperator(h))
//
// where requireOperator is, for example,
//
//	func requireOperator(next http.Handler) http.Handler {
//		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
//			if !isOperator(r) {
//				http.Error(w, "forbidden", http.StatusForbidden)
//				return
//			}
//			next.ServeHTTP(w, r)
//		})
//	}
//
// See docs/console.md for what each page shows and where its numbers come
// from.
package console
