package groupcommit

import "errors"

// ErrFlushFailed reports a batch whose flush failed as a whole, so none of
// its items is known to be written; it wraps the flush's own error.
var ErrFlushFailed = errors.New("groupcommit: batch flush failed")
