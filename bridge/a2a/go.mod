module github.com/lasergo/laser/bridge/a2a

go 1.26.0

// laser-go has no tagged release yet: the replace lines resolve its modules
// from this checkout, so the module builds and tidies on its own as well as
// in the repository's go.work. Drop them when the modules are tagged.
replace github.com/lasergo/laser => ../../

require (
	github.com/a2aproject/a2a-go v0.3.3
	github.com/lasergo/laser v0.0.0-00010101000000-000000000000
)

require (
	github.com/apache/iggy/foreign/go v0.8.0 // indirect
	github.com/avast/retry-go/v5 v5.0.0 // indirect
	github.com/fxamacker/cbor/v2 v2.10.0 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.18.5 // indirect
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk/metric v1.47.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20250715232539-7130f93afb79 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250715232539-7130f93afb79 // indirect
	google.golang.org/grpc v1.73.0 // indirect
	google.golang.org/protobuf v1.36.6 // indirect
)
