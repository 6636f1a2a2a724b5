// Package figures records the reliability suite's measurements as rows of a
// report and prints them as tables. Tests call Record; `make reliability`
// points LASER_RELIABILITY_REPORT at a file, collects the rows every test
// package appended there and prints them with Table.
package figures

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
)

// Environment variables of the suite.
const (
	// EnvReport names the file rows are appended to, as JSON lines; unset,
	// rows only go to the test log.
	EnvReport = "LASER_RELIABILITY_REPORT"
	// EnvMode set to "full" selects the long suite of `make reliability`;
	// anything else runs the short one CI runs within `make test`.
	EnvMode = "LASER_RELIABILITY"
)

// Full reports whether the long suite was asked for.
func Full() bool { return os.Getenv(EnvMode) == "full" }

// Row is one line of a report table: a section (one table), the case it
// measured and its figures in display order.
type Row struct {
	Section string  `json:"section"`
	Case    string  `json:"case"`
	Values  []Value `json:"values"`
}

// Value is one named figure, already formatted.
type Value struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// V formats v as a figure.
func V(name string, v any) Value { return Value{Name: name, Value: fmt.Sprint(v)} }

// Get returns the figure called name, or "".
func (r Row) Get(name string) string {
	for _, v := range r.Values {
		if v.Name == name {
			return v.Value
		}
	}
	return ""
}

// String renders the row on one line for a test log.
func (r Row) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s:", r.Section, r.Case)
	for _, v := range r.Values {
		fmt.Fprintf(&b, " %s=%s", v.Name, v.Value)
	}
	return b.String()
}

// appendMu serializes appends from one process; separate processes rely on
// O_APPEND writing each row in one call.
var appendMu sync.Mutex

// Append adds r to the report file at path.
func Append(path string, r Row) error {
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("figures: encode row: %w", err)
	}
	appendMu.Lock()
	defer appendMu.Unlock()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("figures: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("figures: %w", err)
	}
	return f.Close()
}

// Record logs r in the test's output and, when EnvReport is set, appends it
// to the report file; a failed append fails the test.
func Record(t testing.TB, r Row) {
	t.Helper()
	t.Log(r.String())
	if path := os.Getenv(EnvReport); path != "" {
		if err := Append(path, r); err != nil {
			t.Error(err)
		}
	}
}

// Read returns the rows of the report file at path, in the order written; a
// missing file holds none.
func Read(path string) ([]Row, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("figures: %w", err)
	}
	defer f.Close()
	var rows []Row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var r Row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("figures: %s line %d: %w", path, n, err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("figures: %s: %w", path, err)
	}
	return rows, nil
}

// Table prints rows as one aligned table per section, sections and columns
// in the order they first appear.
func Table(w io.Writer, rows []Row) error {
	var sections []string
	bySection := map[string][]Row{}
	for _, r := range rows {
		if _, ok := bySection[r.Section]; !ok {
			sections = append(sections, r.Section)
		}
		bySection[r.Section] = append(bySection[r.Section], r)
	}
	for i, s := range sections {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if err := table(w, s, bySection[s]); err != nil {
			return err
		}
	}
	return nil
}

func table(w io.Writer, section string, rows []Row) error {
	cols := []string{"case"}
	seen := map[string]bool{"case": true}
	for _, r := range rows {
		for _, v := range r.Values {
			if !seen[v.Name] {
				seen[v.Name] = true
				cols = append(cols, v.Name)
			}
		}
	}
	cells := make([][]string, 0, len(rows)+1)
	cells = append(cells, cols)
	for _, r := range rows {
		line := make([]string, len(cols))
		line[0] = r.Case
		for j, c := range cols[1:] {
			line[j+1] = r.Get(c)
			if line[j+1] == "" {
				line[j+1] = "-"
			}
		}
		cells = append(cells, line)
	}
	width := make([]int, len(cols))
	for _, line := range cells {
		for j, c := range line {
			width[j] = max(width[j], len(c))
		}
	}
	if _, err := fmt.Fprintf(w, "== %s ==\n", section); err != nil {
		return err
	}
	for i, line := range cells {
		var b strings.Builder
		for j, c := range line {
			if j > 0 {
				b.WriteString("  ")
			}
			if j == 0 {
				fmt.Fprintf(&b, "%-*s", width[j], c)
			} else {
				fmt.Fprintf(&b, "%*s", width[j], c)
			}
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
		if i == 0 {
			var sep strings.Builder
			for j := range line {
				if j > 0 {
					sep.WriteString("  ")
				}
				sep.WriteString(strings.Repeat("-", width[j]))
			}
			if _, err := fmt.Fprintln(w, sep.String()); err != nil {
				return err
			}
		}
	}
	return nil
}
