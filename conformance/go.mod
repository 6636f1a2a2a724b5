module github.com/lasergo/laser/conformance

go 1.26.0

// laser-go has no tagged release yet: the replace lines resolve its modules
// from this checkout, so the module builds and tidies on its own as well as
// in the repository's go.work. Drop them when the modules are tagged.
replace github.com/lasergo/laser => ../

replace github.com/lasergo/laser/bridge/a2a => ../bridge/a2a

require (
	github.com/a2aproject/a2a-go v0.3.3
	github.com/cucumber/godog v0.16.0
	github.com/lasergo/laser v0.0.0-00010101000000-000000000000
	github.com/lasergo/laser/bridge/a2a v0.0.0-00010101000000-000000000000
)

require (
	github.com/apache/iggy/foreign/go v0.8.0 // indirect
	github.com/avast/retry-go/v5 v5.0.0 // indirect
	github.com/cucumber/gherkin/go/v42 v42.0.0 // indirect
	github.com/cucumber/messages/go/v34 v34.2.0 // indirect
	github.com/fxamacker/cbor/v2 v2.10.0 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/go-immutable-radix v1.3.1 // indirect
	github.com/hashicorp/go-memdb v1.3.5 // indirect
	github.com/hashicorp/golang-lru v0.5.4 // indirect
	github.com/klauspost/compress v1.18.5 // indirect
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
