package docket

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrPreReleaseSchema reports a schema migrated by a pre-release build of
// Docket: its ledger records one of the versions V3 to V24 that the
// development history before release 0.1.0 added. Release 0.1.0 squashed
// that history into V2; no release ever shipped those versions, so no
// upgrade path leads from them. The schema must be dropped (or restored
// from a V1 or V2 backup) and migrated again. It also matches
// ErrSchemaMismatch, and ErrMigrationOrder when a migration was asked for.
var ErrPreReleaseSchema = errors.New("docket: schema migrated by a pre-release build")

// The ledger versions of the pre-release history: migrations
// 20261201000003 (V3) to 20261203000024 (V24), frozen since release 0.1.0
// replaced them.
const (
	firstPreReleaseVersion = "20261201000003"
	lastPreReleaseVersion  = "20261203000024"
)

// preReleaseVersion reports whether version is a pre-release ledger version.
func preReleaseVersion(version string) bool {
	return len(version) == len(lastPreReleaseVersion) &&
		version >= firstPreReleaseVersion && version <= lastPreReleaseVersion
}

// refusePreRelease returns an ErrPreReleaseSchema error, wrapping also,
// when applied holds a pre-release version, naming its V number; else nil.
// where says which ledger, as "in schema docket".
func refusePreRelease(applied []string, where string, also error) error {
	for _, v := range applied {
		if !preReleaseVersion(v) {
			continue
		}
		number, _ := strconv.Atoi(v[len(v)-6:])
		return fmt.Errorf("%w (%w): the ledger %s records migration %s (pre-release V%d); release 0.1.0 ships schema version 2 and no release shipped V3 to V24, so nothing upgrades from them: drop the schema (or restore a V1 or V2 backup) and migrate again",
			ErrPreReleaseSchema, also, where, v, number)
	}
	return nil
}
