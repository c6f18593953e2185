package docket

import "github.com/docketrun/docket-go/internal/testseam"

func init() {
	testseam.Work = workOne
	testseam.Schema = func(c *Client) string { return c.config.Schema }
}
