package nav

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// checkPath verifies a FindPath result: it starts at from, ends exactly at
// to, and every segment has line of sight over non-Blocked cells.
func checkPath(g *Grid, from, to Point, path []Point) error {
	if len(path) < 2 {
		return fmt.Errorf("path has %d waypoints, want at least 2", len(path))
	}
	if path[0] != from {
		return fmt.Errorf("path starts at %v, want %v", path[0], from)
	}
	if path[len(path)-1] != to {
		return fmt.Errorf("path ends at %v, want %v", path[len(path)-1], to)
	}
	for i := 1; i < len(path); i++ {
		if !g.LineOfSight(path[i-1], path[i], Costly) {
			return fmt.Errorf("segment %d %v→%v has no line of sight", i, path[i-1], path[i])
		}
		if c, ok := sampledClear(g, path[i-1], path[i]); !ok {
			return fmt.Errorf("segment %d %v→%v enters blocked cell %v", i, path[i-1], path[i], c)
		}
	}
	return nil
}

// sampledClear is an independent check of a segment: points sampled every
// ~0.02 cells (at offsets that avoid landing exactly on grid corners) must
// lie in non-Blocked cells.
func sampledClear(g *Grid, a, b Point) (Cell, bool) {
	n := int(a.Dist(b)/0.02) + 1
	for k := 0; k < n; k++ {
		t := (float64(k) + 0.3713) / float64(n)
		c := PointCell(Point{a.X + t*(b.X-a.X), a.Y + t*(b.Y-a.Y)})
		if g.At(c) == Blocked {
			return c, false
		}
	}
	return Cell{}, true
}

// maiStats summarises one scenario run.
type maiStats struct {
	total, solved int
	ratios        int     // problems with a positive optimum
	sumRatio      float64 // sum of PathLength/optimal
	worst         float64
	worstIdx      int
	elapsed       time.Duration // FindPath time only
	failures      []string
}

func (s maiStats) mean() float64 {
	if s.ratios == 0 {
		return 1
	}
	return s.sumRatio / float64(s.ratios)
}

// runMovingAI solves every problem with FindPath between cell centres and
// validates each path.
func runMovingAI(p *Planner, probs []MovingAIProblem) maiStats {
	st := maiStats{total: len(probs)}
	for i, pr := range probs {
		from, to := pr.Start.Center(), pr.Goal.Center()
		t0 := time.Now()
		path, err := p.FindPath(from, to)
		st.elapsed += time.Since(t0)
		if err != nil {
			st.failures = append(st.failures, fmt.Sprintf("problem %d %v→%v: %v", i, pr.Start, pr.Goal, err))
			continue
		}
		if err := checkPath(p.Grid(), from, to, path); err != nil {
			st.failures = append(st.failures, fmt.Sprintf("problem %d %v→%v: %v", i, pr.Start, pr.Goal, err))
			continue
		}
		st.solved++
		if pr.Optimal > 0 {
			r := PathLength(path) / pr.Optimal
			st.ratios++
			st.sumRatio += r
			if r > st.worst {
				st.worst, st.worstIdx = r, i
			}
		}
	}
	return st
}

func loadMovingAIFiles(tb testing.TB, mapPath, scenPath string) (*Grid, []MovingAIProblem) {
	tb.Helper()
	mf, err := os.Open(mapPath)
	require.NoError(tb, err)
	defer mf.Close()
	g, err := LoadMovingAIMap(mf)
	require.NoError(tb, err, "map %s", mapPath)
	sf, err := os.Open(scenPath)
	require.NoError(tb, err)
	defer sf.Close()
	probs, err := LoadMovingAIScenarios(sf)
	require.NoError(tb, err, "scenarios %s", scenPath)
	return g, probs
}

func TestMovingAIArena(t *testing.T) {
	g, probs := loadMovingAIFiles(t, filepath.Join("testdata", "arena.map"), filepath.Join("testdata", "arena.map.scen"))
	require.Equal(t, 49, g.Cols())
	require.Equal(t, 49, g.Rows())
	require.Len(t, probs, 130)
	p := NewPlanner(g, Options{})
	st := runMovingAI(p, probs)
	require.Empty(t, st.failures)
	require.Equal(t, st.total, st.solved)
	require.LessOrEqual(t, st.mean(), 1.02, "mean ratio of path length to octile optimum")
	t.Logf("arena: %d problems, mean ratio %.4f, worst %.4f", st.total, st.mean(), st.worst)
}

func TestLoadMovingAIErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
		scen           bool
	}{
		{name: "no map line", in: "type octile\nheight 2\nwidth 2\n", want: "no \"map\" line"},
		{name: "bad height", in: "type octile\nheight x\nwidth 2\nmap\n..\n..\n", want: "line 2: invalid height"},
		{name: "unknown header", in: "type octile\ndepth 2\n", want: "line 2: unknown header"},
		{name: "short row", in: "type octile\nheight 2\nwidth 2\nmap\n..\n.\n", want: "line 6: row 1 has 1 characters, want 2"},
		{name: "missing rows", in: "type octile\nheight 3\nwidth 2\nmap\n..\n..\n", want: "line 7: unexpected end of input, got 2 of 3 rows"},
		{name: "trailing junk", in: "type octile\nheight 1\nwidth 2\nmap\n..\nxx\n", want: "line 6: unexpected content"},
		{name: "no version", scen: true, in: "0\ta.map\t2\t2\t0\t0\t1\t1\t1.4\n", want: "line 1: want \"version 1\""},
		{name: "columns", scen: true, in: "version 1\n0\ta.map\t2\t2\t0\t0\t1\n", want: "line 2: want 9 columns, got 7"},
		{name: "bad int", scen: true, in: "version 1\n0\ta.map\t2\t2\tx\t0\t1\t1\t1.4\n", want: "line 2: column 5"},
		{name: "bad optimum", scen: true, in: "version 1\n0\ta.map\t2\t2\t0\t0\t1\t1\tz\n", want: "line 2: column 9"},
		{name: "outside", scen: true, in: "version 1\n0\ta.map\t2\t2\t0\t0\t2\t1\t1.4\n", want: "line 2: start or goal outside"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.scen {
				_, err = LoadMovingAIScenarios(strings.NewReader(tc.in))
			} else {
				_, err = LoadMovingAIMap(strings.NewReader(tc.in))
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestLoadMovingAIMapCRLF(t *testing.T) {
	in := "type octile\r\nheight 2\r\nwidth 3\r\nmap\r\n.@G\r\nTS."
	g, err := LoadMovingAIMap(strings.NewReader(in))
	require.NoError(t, err)
	want := [][]Tile{{Free, Blocked, Free}, {Blocked, Free, Free}}
	for y, row := range want {
		for x, tile := range row {
			require.Equal(t, tile, g.At(Cell{x, y}), "cell (%d, %d)", x, y)
		}
	}
	probs, err := LoadMovingAIScenarios(strings.NewReader("version 1\r\n0\tm.map\t3\t2\t0\t0\t2\t1\t2.41421356\r\n\r\n"))
	require.NoError(t, err)
	require.Equal(t, []MovingAIProblem{{Bucket: 0, Map: "m.map", Width: 3, Height: 2,
		Start: Cell{0, 0}, Goal: Cell{2, 1}, Optimal: 2.41421356}}, probs)
}

// movingAIDir returns the benchmark directory: $ARENA_MOVINGAI_DIR, or
// shared/bench/movingai found by walking up from the package directory.
func movingAIDir() (string, error) {
	if d := os.Getenv("ARENA_MOVINGAI_DIR"); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return "", fmt.Errorf("ARENA_MOVINGAI_DIR=%q is not a directory", d)
		}
		return d, nil
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		return "", err
	}
	for {
		cand := filepath.Join(dir, "shared", "bench", "movingai")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no shared/bench/movingai directory above the package and ARENA_MOVINGAI_DIR is unset")
		}
		dir = parent
	}
}

// maxOracleProblems caps how many problems per map BenchmarkMovingAI
// compares with the any-angle oracle.
const maxOracleProblems = 300

// BenchmarkMovingAI solves every scenario of every map in the Moving AI
// directory once per iteration and reports, per map, the solved share, the
// mean and worst ratio of path length to the listed octile optimum, and the
// mean time per FindPath; then, outside the timed part, the mean and worst
// ratio to the exact any-angle optimum (anyAngleOracle) on a sample. It
// fails when the data is missing, unless ARENA_MOVINGAI_OPTIONAL=1.
func BenchmarkMovingAI(b *testing.B) {
	missing := func(why string) {
		if os.Getenv("ARENA_MOVINGAI_OPTIONAL") == "1" {
			b.Skipf("Moving AI benchmark data missing (ARENA_MOVINGAI_OPTIONAL=1): %s", why)
		}
		b.Fatalf("Moving AI benchmark data missing: %s (set ARENA_MOVINGAI_DIR, or ARENA_MOVINGAI_OPTIONAL=1 to skip)", why)
	}
	dir, err := movingAIDir()
	if err != nil {
		missing(err.Error())
	}
	maps, err := filepath.Glob(filepath.Join(dir, "*.map"))
	require.NoError(b, err)
	if len(maps) == 0 {
		missing("no *.map files in " + dir)
	}
	sort.Strings(maps)
	header := fmt.Sprintf("%-16s %9s %8s %8s %8s %10s %9s %7s %8s %9s %9s",
		"map", "size", "problems", "solved%", "mean", "worst", "µs/path", "build", "nodes", "aa-mean", "aa-worst")
	var table []string
	defer func() {
		// Parent benchmark logs are shown with -v only; each map's own log
		// carries its row too.
		if len(table) > 0 {
			b.Logf("Moving AI summary (%s):\n%s\n%s", dir, header, strings.Join(table, "\n"))
		}
	}()
	for _, mp := range maps {
		name := strings.TrimSuffix(filepath.Base(mp), ".map")
		scen := mp + ".scen"
		if _, err := os.Stat(scen); err != nil {
			missing(fmt.Sprintf("%s: no scenario file", name))
		}
		b.Run(name, func(b *testing.B) {
			g, probs := loadMovingAIFiles(b, mp, scen)
			t0 := time.Now()
			p := NewPlanner(g, Options{})
			build := time.Since(t0)
			b.ResetTimer()
			var st maiStats
			for i := 0; i < b.N; i++ {
				st = runMovingAI(p, probs)
			}
			b.StopTimer()
			for i, f := range st.failures {
				if i == 5 {
					b.Logf("… %d more failures", len(st.failures)-5)
					break
				}
				b.Log(f)
			}
			solved := 100 * float64(st.solved) / float64(max(st.total, 1))
			usPath := float64(st.elapsed.Microseconds()) / float64(max(st.total, 1))
			b.ReportMetric(solved, "solved-%")
			b.ReportMetric(st.mean(), "mean-ratio")
			b.ReportMetric(st.worst, "worst-ratio")
			b.ReportMetric(usPath, "µs/path")
			b.ReportMetric(float64(build.Microseconds())/1000, "build-ms")
			// Against the exact any-angle optimum, on an even sample of
			// at most maxOracleProblems problems per map.
			o := newAnyAngleOracle(g)
			var aa qualityStats
			step := max(1, len(probs)/maxOracleProblems)
			for i := 0; i < len(probs); i += step {
				from, to := probs[i].Start.Center(), probs[i].Goal.Center()
				path, err := p.FindPath(from, to)
				aa.add(p.Grid(), o, from, to, path, err)
			}
			if aa.invalid > 0 || aa.belowOracle > 0 {
				b.Errorf("%s: %d invalid paths, %d below the optimum: %v", name, aa.invalid, aa.belowOracle, aa.failures)
			}
			b.ReportMetric(aa.mean(), "aa-mean")
			b.ReportMetric(aa.worst, "aa-worst")
			row := fmt.Sprintf("%-16s %9s %8d %8.2f %8.4f %10.4f %9.1f %7s %8d %9.4f %9.4f",
				name, fmt.Sprintf("%dx%d", g.Cols(), g.Rows()), st.total, solved, st.mean(), st.worst, usPath,
				build.Round(time.Millisecond), len(p.abs.nodeCell), aa.mean(), aa.worst)
			b.Logf("\n%s\n%s", header, row)
			if len(table) > 0 && strings.HasPrefix(table[len(table)-1], fmt.Sprintf("%-16s ", name)) {
				table[len(table)-1] = row // a later, larger b.N run of the same map
			} else {
				table = append(table, row)
			}
			if math.IsNaN(st.mean()) {
				b.Fatal("NaN ratio")
			}
		})
	}
}
