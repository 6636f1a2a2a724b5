# laser-go developer tasks. `make help` lists them.
GO        ?= go
# MODULES are the workspace's modules (the use lines of go.work): the root
# and the integrations with dependencies of their own; PKGS is every package
# of every module, so each target below covers them all.
MODULES   ?= $(shell $(GO) work edit -json | sed -n 's/.*"DiskPath": "\(.*\)".*/\1/p')
PKGS      ?= $(addsuffix /...,$(MODULES))
FUZZTIME  ?= 1m
BENCHTIME ?= 1s
RELIABILITY_FUZZTIME ?= 20s
FUZZ_CI_TIME ?= 5s
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z][a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

.PHONY: test
test: vet ## vet and run every test of every module with the race detector (the README's test command)
	$(GO) test -race -count=1 $(PKGS)

.PHONY: test-short
test-short: ## the quick run: every test of every module with -short and without the race detector (skips the reliability suite's processes and the scratch-module builds)
	$(GO) test -short -count=1 $(PKGS)

.PHONY: ci
ci: checkfmt checktidy checkgenerate lint test ## what .ci/run executes: formatting, tidy modules, generated code up to date, lint, then make test

.PHONY: conformance
conformance: ## run the reference's cross-SDK Gherkin scenarios (LASER_BDD_DIR, default ../shared/reference-bdd)
	LASER_BDD_DIR=$${LASER_BDD_DIR:-$(CURDIR)/../shared/reference-bdd} $(GO) test -race -count=1 -run '^TestConformance$$' -v ./conformance/

.PHONY: vet
vet: ## go vet
	$(GO) vet $(PKGS)

.PHONY: lint
lint: ## staticcheck (every check it enables by default); CI requires zero findings
	$(GO) run $(STATICCHECK) $(PKGS)

.PHONY: checkfmt
checkfmt: ## fail when a file is not gofmt'd
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: checktidy
checktidy: ## fail when a module's go.mod or go.sum is not what go mod tidy writes (each module on its own)
	@for m in $(MODULES); do \
		(cd $$m && $(GO) mod tidy -diff) || { echo "go mod tidy needed in $$m"; exit 1; }; \
	done

.PHONY: bench
bench: ## run the benchmarks (ns/op, allocs/op, msgs/s)
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)

.PHONY: bench-iggy
bench-iggy: ## the README's performance figures: Iggy benchmarks (against LASER_IGGY_ADDR when set, else the in-process test server), latency, pipeline
	$(GO) test -run '^$$' -bench '^BenchmarkPollAndStore$$' -benchtime 20x ./iggy/
	$(GO) test -run '^$$' -bench '^BenchmarkPublish$$' -benchtime 2000x ./iggy/
	$(GO) test -run '^$$' -bench '^BenchmarkLatency$$' ./iggy/ ./embedlog/
	$(GO) test -run '^$$' -bench '^Benchmark(Pipeline|InFlightMemory)' -benchmem ./runtime/

.PHONY: bench-iggy-pinned
bench-iggy-pinned: ## BenchmarkPollAndStore on core 1 with GOMAXPROCS=1, for an Iggy server pinned to core 0 (taskset -c 0 iggy-server), so the two do not compete for cores
	GOMAXPROCS=1 $(GO) test -exec 'taskset -c 1' -run '^$$' -bench '^BenchmarkPollAndStore$$' -benchtime 20x ./iggy/

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME each
	@for pkg in $$($(GO) list $(PKGS)); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$target"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

.PHONY: fuzz-ci
fuzz-ci: ## every fuzz target of the root module for FUZZ_CI_TIME each (default 5s), with a table of execs: what CI runs, so a target that cannot fuzz fails the submission that broke it
	GO=$(GO) $(GO) run ./reliability/cmd/suite -tests=false -fuzztime $(FUZZ_CI_TIME)

WIREDIFF_COUNT ?= 200000
WIREDIFF_SEED  ?= $(shell date +%s)

.PHONY: wirediff
wirediff: ## the wire decoder against the reference's laser-wire crate (tools/wireoracle, from crates.io; needs cargo) on WIREDIFF_COUNT mutated inputs, seed WIREDIFF_SEED
	cargo build --release --locked --ignore-rust-version --manifest-path tools/wireoracle/Cargo.toml
	LASER_WIRE_ORACLE=$(CURDIR)/tools/wireoracle/target/release/wireoracle \
	LASER_WIRE_DIFF_COUNT=$(WIREDIFF_COUNT) LASER_WIRE_DIFF_SEED=$(WIREDIFF_SEED) \
		$(GO) test -race -count=1 -run '^TestWireDiff$$' -v ./wire/

.PHONY: reliability
reliability: ## run the reliability suite and print its figures
	GO=$(GO) $(GO) run ./reliability/cmd/suite -fuzztime $(RELIABILITY_FUZZTIME)

.PHONY: golden
golden: ## rewrite lasergen's golden files (testdata/golden/*.txtar) and gen's Directives doc from the generator
	$(GO) test ./gen -run '^(TestGolden|TestPackageDocListsTheFormsAndShapesTheDiagnosticsUse)$$' -count=1 -update

.PHONY: generate
generate: ## run go generate on every package of every module (lasergen writes laser_gen.go files)
	$(GO) generate $(PKGS)

.PHONY: checkgenerate
checkgenerate: generate ## fail when go generate changed a tracked file or left a new generated one
	@git diff --exit-code
	@new=$$(git ls-files --others --exclude-standard -- '*laser_gen.go' '*laser_gen_test.go'); \
	if [ -n "$$new" ]; then echo "go generate created untracked files:"; echo "$$new"; exit 1; fi
