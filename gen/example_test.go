package gen_test

import (
	"fmt"
	"log"
	"path/filepath"

	"github.com/lasergo/laser/gen"
)

// Generate returns the files for a package, or the diagnostics that stop
// them; Stale tells which differ from the disk (go generate writes them
// with Write).
func ExampleGenerate() {
	res, err := gen.Generate("../examples/triage", gen.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		fmt.Println(d)
	}
	for _, f := range res.Files {
		fmt.Println(filepath.Base(f.Path))
	}
	fmt.Println(len(res.Stale()), "stale")
	// Output:
	// laser_gen.go
	// laser_gen_test.go
	// 0 stale
}
