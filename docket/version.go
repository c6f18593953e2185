package docket

// Version is the release this source is: the newest version section of
// CHANGELOG.md, whose migrations db/released-migrations.sum records. Work
// after a release keeps it until the next release sets the next version;
// `docket version` prints it with the VCS revision of the build.
const Version = "0.1.0"
