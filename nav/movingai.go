package nav

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MovingAIProblem is one line of a Moving AI Lab scenario file
// (Sturtevant 2012, "Benchmarks for Grid-Based Pathfinding").
type MovingAIProblem struct {
	Bucket        int
	Map           string
	Width, Height int
	Start, Goal   Cell
	// Optimal is the listed optimal octile path length (straight 1,
	// diagonal √2, no corner cutting).
	Optimal float64
}

// LoadMovingAIMap parses a Moving AI ".map" file:
//
//	type octile
//	height H
//	width W
//	map
//	<H rows of W characters>
//
// '.', 'G' and 'S' are walkable (Free); every other character is Blocked.
// A trailing '\r' on any line is ignored. Errors name the offending line.
func LoadMovingAIMap(r io.Reader) (*Grid, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	line := 0
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		line++
		return strings.TrimSuffix(sc.Text(), "\r"), true
	}
	width, height := -1, -1
	for {
		text, ok := next()
		if !ok {
			if err := sc.Err(); err != nil {
				return nil, fmt.Errorf("moving ai map: line %d: %w", line+1, err)
			}
			return nil, fmt.Errorf("moving ai map: unexpected end of input after line %d: no \"map\" line", line)
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		key := fields[0]
		if key == "map" && len(fields) == 1 {
			break
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("moving ai map: line %d: malformed header %q", line, text)
		}
		switch key {
		case "type":
			// "octile" in the benchmark sets; other types parse the same way.
		case "height", "width":
			v, err := strconv.Atoi(fields[1])
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("moving ai map: line %d: invalid %s %q", line, key, fields[1])
			}
			if key == "height" {
				height = v
			} else {
				width = v
			}
		default:
			return nil, fmt.Errorf("moving ai map: line %d: unknown header %q", line, key)
		}
	}
	if width < 0 || height < 0 {
		return nil, fmt.Errorf("moving ai map: line %d: \"map\" before both width and height", line)
	}
	if int64(width)*int64(height) > 1<<28 {
		return nil, fmt.Errorf("moving ai map: %d×%d map is too large", width, height)
	}
	g := NewGrid(width, height)
	for y := 0; y < height; y++ {
		text, ok := next()
		if !ok {
			if err := sc.Err(); err != nil {
				return nil, fmt.Errorf("moving ai map: line %d: %w", line+1, err)
			}
			return nil, fmt.Errorf("moving ai map: line %d: unexpected end of input, got %d of %d rows", line+1, y, height)
		}
		if len(text) != width {
			return nil, fmt.Errorf("moving ai map: line %d: row %d has %d characters, want %d", line, y, len(text), width)
		}
		for x := 0; x < width; x++ {
			switch text[x] {
			case '.', 'G', 'S':
			default:
				g.tiles[y*width+x] = Blocked
			}
		}
	}
	for {
		text, ok := next()
		if !ok {
			break
		}
		if strings.TrimSpace(text) != "" {
			return nil, fmt.Errorf("moving ai map: line %d: unexpected content after %d rows", line, height)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("moving ai map: line %d: %w", line+1, err)
	}
	return g, nil
}

// LoadMovingAIScenarios parses a Moving AI ".map.scen" file: a "version 1"
// (or "version 1.0") line, then one problem per line with nine
// tab-separated columns (bucket, map, width, height, start x, start y,
// goal x, goal y, optimal length). Blank lines are skipped; a trailing '\r'
// is ignored. Errors name the offending line.
func LoadMovingAIScenarios(r io.Reader) ([]MovingAIProblem, error) {
	sc := bufio.NewScanner(r)
	line := 0
	var out []MovingAIProblem
	sawVersion := false
	for sc.Scan() {
		line++
		text := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		if !sawVersion {
			f := strings.Fields(text)
			if len(f) != 2 || f[0] != "version" {
				return nil, fmt.Errorf("moving ai scenarios: line %d: want \"version 1\", got %q", line, text)
			}
			if v, err := strconv.ParseFloat(f[1], 64); err != nil || v != 1 {
				return nil, fmt.Errorf("moving ai scenarios: line %d: unsupported version %q", line, f[1])
			}
			sawVersion = true
			continue
		}
		cols := strings.Split(text, "\t")
		if len(cols) != 9 {
			cols = strings.Fields(text)
		}
		if len(cols) != 9 {
			return nil, fmt.Errorf("moving ai scenarios: line %d: want 9 columns, got %d", line, len(cols))
		}
		var ints [7]int
		for i, col := range [7]int{0, 2, 3, 4, 5, 6, 7} {
			v, err := strconv.Atoi(strings.TrimSpace(cols[col]))
			if err != nil {
				return nil, fmt.Errorf("moving ai scenarios: line %d: column %d: %w", line, col+1, err)
			}
			ints[i] = v
		}
		opt, err := strconv.ParseFloat(strings.TrimSpace(cols[8]), 64)
		if err != nil || opt < 0 {
			return nil, fmt.Errorf("moving ai scenarios: line %d: column 9: invalid optimal length %q", line, cols[8])
		}
		p := MovingAIProblem{
			Bucket: ints[0], Map: strings.TrimSpace(cols[1]),
			Width: ints[1], Height: ints[2],
			Start: Cell{ints[3], ints[4]}, Goal: Cell{ints[5], ints[6]},
			Optimal: opt,
		}
		if p.Start.X < 0 || p.Start.Y < 0 || p.Goal.X < 0 || p.Goal.Y < 0 ||
			p.Start.X >= p.Width || p.Goal.X >= p.Width || p.Start.Y >= p.Height || p.Goal.Y >= p.Height {
			return nil, fmt.Errorf("moving ai scenarios: line %d: start or goal outside the %d×%d map", line, p.Width, p.Height)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("moving ai scenarios: line %d: %w", line+1, err)
	}
	if !sawVersion {
		return nil, fmt.Errorf("moving ai scenarios: empty input: no \"version 1\" line")
	}
	return out, nil
}
