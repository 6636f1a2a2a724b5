// Command fieldsgen writes fields_gen.go in the current directory (the
// wire package, run by go generate) from its recordFields tables.
package main

import (
	"fmt"
	"os"

	"github.com/lasergo/laser/wire/internal/fieldsgen"
)

func main() {
	src, err := fieldsgen.Generate(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(fieldsgen.FileName, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
