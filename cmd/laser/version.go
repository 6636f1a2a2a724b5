package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionInfo is what 'laser version' prints.
type versionInfo struct {
	Laser string `json:"laser"`
	Go    string `json:"go"`
	SDK   string `json:"iggy_sdk"`
}

// buildVersions reads the versions from the binary's build information.
func buildVersions() versionInfo {
	v := versionInfo{Laser: "(unknown)", SDK: "(unknown)"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Go = bi.GoVersion
	v.Laser = bi.Main.Version
	if v.Laser == "" {
		v.Laser = "(devel)"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && v.Laser == "(devel)" {
			v.Laser += " " + s.Value
		}
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/apache/iggy/foreign/go" {
			v.SDK = d.Version
		}
	}
	return v
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the versions of laser, Go and the Iggy SDK",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			v := buildVersions()
			if a.json {
				return a.printJSON(v)
			}
			_, err := fmt.Fprintf(a.stdout, "laser %s\ngo %s\niggy sdk %s (Iggy server 0.8.x)\n", v.Laser, v.Go, v.SDK)
			return err
		},
	}
}
