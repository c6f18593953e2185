# Docket for Go. `make test` is the full suite (it starts its own PostgreSQL);
# `make demo` runs the main job on a throwaway local PostgreSQL.
#
# Modules: the library (this directory), tests/ (the integration tests and
# their harness: testcontainers, chromedp, rapid and the OpenTelemetry SDK
# stay out of the library's go.mod), bench/, examples/goose and
# examples/traces. Each module's targets cd into it; there is no go.work.

GO        ?= go
SQLC      := $(GO) tool -modfile=tools/go.mod sqlc
STATICCHECK := $(GO) tool -modfile=tools/go.mod staticcheck
PKGS      := ./...
# TESTS is the tests module; its staticcheck reads the tools from ../tools.
TESTS     := tests
TESTS_STATICCHECK := $(GO) tool -modfile=../tools/go.mod staticcheck
TEST_FLAGS ?= -count=1 -timeout 30m
# RACE_RUN picks the database tests test-race runs again under -race: the
# Worker, the claim paths, telemetry and the concurrent unique inserts,
# where the concurrency is. The pattern runs over every package of the
# tests module, so a Worker, Claim, Telemetry or UniqueRuns test keeps its
# race run whichever subject package holds it.
RACE_RUN  ?= Worker|Claim|Telemetry|UniqueRuns

.PHONY: all test-deps tools generate check-generate release check-tidy vet test test-unit test-pg test-matrix demo bench console-screenshots

all: check-generate vet test

# SQLC_OUT are the packages the two entries of sqlc.yaml write: the facade's
# internal/dbgen (every query) and the public gen (db/queries/app only).
SQLC_OUT := internal/dbgen gen

## generate: expand db/functions into the open migration, regenerate internal/dbgen/ and gen/ with sqlc, dump db/schema.sql (the current schema) from a fresh migration, and regenerate the example app's store from it
generate:
	$(GO) run ./internal/sqlinclude
	@# sqlc never deletes: a query file moved or removed would leave its old accessors behind.
	rm -f $(addsuffix /*.sql.go,$(SQLC_OUT))
	$(SQLC) generate
	$(GO) run ./internal/schemadump
	$(SQLC) generate -f examples/invoices/sqlc.yaml

## release: record the open migration as shipped by release $(VERSION), whose CHANGELOG.md section must exist; frozen from then on
release:
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=x.y.z"; exit 2; }
	$(GO) run ./internal/sqlinclude -release $(VERSION)

## check-generate: fail when a migration, internal/dbgen/, gen/, db/schema.sql or the example's store differ from their sources, a released migration changed, or more than one migration is open
check-generate:
	$(GO) run ./internal/sqlinclude -check
	$(SQLC) diff
	$(GO) run ./internal/schemadump -check
	$(SQLC) diff -f examples/invoices/sqlc.yaml

## check-tidy: fail when go.mod or go.sum of the library, the tests module, the bench module or an example module is not tidy
check-tidy:
	$(GO) mod tidy -diff
	cd $(TESTS) && $(GO) mod tidy -diff
	cd bench && $(GO) mod tidy -diff
	cd examples/goose && $(GO) mod tidy -diff
	cd examples/traces && $(GO) mod tidy -diff

## vet: static checks of the library, the tests module, the bench module and the example modules
vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet $(PKGS)
	$(STATICCHECK) $(PKGS)
	cd $(TESTS) && $(GO) vet ./... && $(TESTS_STATICCHECK) ./...
	cd bench && $(GO) vet ./... && $(GO) tool -modfile=../tools/go.mod staticcheck ./...
	cd examples/goose && $(GO) vet ./... && $(GO) tool -modfile=../../tools/go.mod staticcheck ./...
	cd examples/traces && $(GO) vet ./... && $(GO) tool -modfile=../../tools/go.mod staticcheck ./...

## test-deps: install the Debian packages the suite needs (PostgreSQL, psql, PgBouncer, Chromium, gcc, npm) when missing
test-deps:
	@bash tools/install-test-deps

## tools: build the sqlc and staticcheck tools (cached by Go after the first build)
tools:
	@echo "building the sqlc and staticcheck tools (the first build compiles sqlc with cgo: 2-3 minutes)"
	@$(SQLC) version >/dev/null
	@$(STATICCHECK) -version >/dev/null

## test: install what the suite needs, generated-code drift, frozen-migration and tidy checks, vet, then every test of the library and the tests module against real PostgreSQL
test: test-deps tools check-generate check-tidy vet
	$(GO) test $(TEST_FLAGS) $(PKGS)
	cd $(TESTS) && $(GO) test $(TEST_FLAGS) ./...
	$(MAKE) test-race

.PHONY: test-race

## test-race (run by test after the main run): the facade's tests and the RACE_RUN tests of the tests module under the race detector
test-race:
	$(GO) test -race $(TEST_FLAGS) ./docket/
	cd $(TESTS) && $(GO) test -race $(TEST_FLAGS) -run '$(RACE_RUN)' ./...

## test-unit: the database-free tests only, of both modules (core-only job)
test-unit:
	$(GO) test $(TEST_FLAGS) -short $(PKGS)
	cd $(TESTS) && $(GO) test $(TEST_FLAGS) -short ./...

# PG_SKIP names the tests test-pg leaves out: the domain move needs pg_dump
# and pg_restore, and the failover test pg_basebackup, of the server's major,
# which the fetched binaries lack, and
# on PostgreSQL 13 the static statement-reach checks need SQL-standard
# function bodies (14 and newer); the default leg runs all of them.
PG_SKIP   ?= TestDomainMovesToAnotherDatabaseByDumpAndRestore|TestWorkerSurvivesFailoverToASynchronousStandby$(if $(filter 13,$(PG)),|TestEveryStatementStaysInItsSchema$$|TestSchemaReachCheckersCatchEveryWayOut)

## test-pg: the database tests on PostgreSQL $(PG) (binaries fetched when not installed): the tests module and the library's launcher
test-pg:
	@test -n "$(PG)" || { echo "usage: make test-pg PG=13"; exit 2; }
	cd $(TESTS) && DOCKET_TEST_PG_VERSION=$(PG) $(GO) test $(TEST_FLAGS) -skip '$(PG_SKIP)' ./...
	DOCKET_TEST_PG_VERSION=$(PG) $(GO) test $(TEST_FLAGS) -skip '$(PG_SKIP)' ./internal/...

## test-matrix: the core-only job plus the database tests on PostgreSQL 13 and 17
test-matrix: test-unit
	$(MAKE) test-pg PG=13
	$(MAKE) test-pg PG=17

## demo: the main job on a throwaway local PostgreSQL
demo:
	$(GO) run ./cmd/docket demo

## console-screenshots: the console browser test's screenshots into docs/console (the docs show two)
console-screenshots:
	cd $(TESTS) && DOCKET_CONSOLE_SCREENSHOTS=$(CURDIR)/docs/console $(GO) test -count=1 -run 'TestConsoleBrowser$$' ./admin/

## bench: the scorecard (its own module, starts its own PostgreSQL)
bench:
	cd bench && $(GO) run . -out results.json $(BENCH_FLAGS)
