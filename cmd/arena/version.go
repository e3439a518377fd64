package main

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"runtime/debug"
)

// buildInfo is what the build recorded about itself.
type buildInfo struct {
	Version  string // the module version, "(devel)" for a build from a work tree
	Commit   string // the VCS revision, "unknown" when not recorded
	Time     string // the commit's time, "" when not recorded
	Modified bool   // the work tree had changes
	Go       string
	// PGO is the file name of the profile the build was optimised with
	// (cmd/arena/default.pgo, see pgo.sh), "" for none.
	PGO string
}

// readBuildInfo reads the module version and VCS stamp of this binary
// (go build stamps them; go run and tests may not).
func readBuildInfo() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildInfo{Version: "(devel)", Commit: "unknown", Go: runtime.Version()}
	}
	return parseBuildInfo(bi, runtime.Version())
}

// parseBuildInfo is readBuildInfo's reading of what a build recorded.
func parseBuildInfo(bi *debug.BuildInfo, goVersion string) buildInfo {
	b := buildInfo{Version: "(devel)", Commit: "unknown", Go: goVersion}
	if bi.Main.Version != "" {
		b.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "-pgo":
			b.PGO = filepath.Base(s.Value)
		}
	}
	return b
}

func (b buildInfo) String() string {
	s := fmt.Sprintf("arena %s, commit %s", b.Version, b.Commit)
	if b.Time != "" {
		s += " (" + b.Time + ")"
	}
	if b.Modified {
		s += ", with uncommitted changes"
	}
	if b.PGO != "" {
		s += ", optimised with " + b.PGO
	}
	return s + ", " + b.Go
}

func cmdVersion(args []string, stdout io.Writer) error {
	fs := newFlags("version", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkFlags(fs, 0); err != nil {
		return err
	}
	fmt.Fprintln(stdout, readBuildInfo())
	return nil
}
