// Command lasergen turns struct types and methods annotated with //laser:
// directives into typed decode, routing, dispatch, clients and agent cards
// (see package github.com/lasergo/laser/gen for the directives). Record it
// as a tool of your module once, then run it from a go:generate line in the
// package:
//
//	go get -tool github.com/lasergo/laser/cmd/lasergen
//
//	//go:generate go tool lasergen
//
// The tool directive pins lasergen to the laser-go version in go.mod and
// keeps its dependencies through go mod tidy (a "go run" line does not).
//
// It writes laser_gen.go only when its content changes. Problems are printed
// as file:line:col: message on stderr, all at once, and nothing is written;
// the exit status is then 1. With -check it writes nothing and exits 1 when
// the file on disk is not what it would write.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lasergo/laser/gen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: lasergen [-dir dir] [-out file] [-check] [-tags t1,t2] [-test=false]

lasergen writes laser_gen.go for the //laser: directives of one package.
Set it up once in your module, then run go generate:

	go get -tool github.com/lasergo/laser/cmd/lasergen
	//go:generate go tool lasergen        (in a file of the package)

Flags:
`

// run is main without the process: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lasergen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", ".", "directory of the package to generate for")
	out := fs.String("out", gen.DefaultOutput, "name of the generated file inside -dir")
	check := fs.Bool("check", false, "write nothing; exit 1 when the generated file is missing or out of date")
	tags := fs.String("tags", "", "comma-separated build tags to load the package with")
	test := fs.Bool("test", true, "also write laser_gen_test.go, whose test fails go test when laser_gen.go is stale (-test=false removes it)")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lasergen: unexpected arguments %s\n", strings.Join(fs.Args(), " "))
		fs.Usage()
		return 2
	}
	if *out == "" || filepath.Base(*out) != *out || !strings.HasSuffix(*out, ".go") {
		fmt.Fprintf(stderr, "lasergen: -out %q must be a .go file name without a directory\n", *out)
		return 2
	}
	opts := gen.Options{Output: *out, NoTest: !*test}
	if *tags != "" {
		opts.BuildFlags = []string{"-tags=" + *tags}
	}
	res, err := gen.Generate(*dir, opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if len(res.Diagnostics) > 0 {
		base := positionBase()
		for _, d := range res.Diagnostics {
			d.Pos.Filename = fromDir(*dir, d.Pos.Filename, base)
			fmt.Fprintln(stderr, d.String())
		}
		return 1
	}
	if *check {
		stale := res.Stale()
		for _, p := range stale {
			fmt.Fprintf(stderr, "lasergen: %s is out of date; run go generate\n", rel(p))
		}
		if len(stale) > 0 {
			return 1
		}
		return 0
	}
	if _, err := res.Write(); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// positionBase is the directory diagnostics are relative to: the working
// directory, as go vet prints positions. Under go generate the working
// directory is the package's, while the user ran go generate ./... from the
// module root (the go command does not pass its own directory on), so there
// positions are relative to the module root: billing/agent.go:12:3, as
// go vet ./... prints them from the root.
func positionBase() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	if os.Getenv("GOPACKAGE") == "" {
		return wd
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return wd
		}
		dir = parent
	}
}

// fromDir rewrites a diagnostic's file name, relative to the package
// directory dir, to be relative to base when it lies inside it, else
// absolute.
func fromDir(dir, name, base string) string {
	if name == "" || filepath.IsAbs(name) || base == "" {
		return name
	}
	abs, err := filepath.Abs(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return name
	}
	if r, err := filepath.Rel(base, abs); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return abs
}

// rel shortens a path to be relative to the working directory when it can.
func rel(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}
