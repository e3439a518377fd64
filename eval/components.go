package eval

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/arena-sim/arena/engine"
	"github.com/arena-sim/arena/world"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// WriteComponentReports writes what each of the finished world's components
// produced into DIR/COMPONENT/: a world.Reporter's tables as NAME.csv and
// NAME.json and plots as NAME.png, a world.Documenter's documents under their
// own names. It returns the files written.
func WriteComponentReports(dir string, w *world.World) ([]string, error) {
	var files []string
	for _, c := range w.Components() {
		cdir := filepath.Join(dir, fileSafe(c.Name()))
		var tables []world.Table
		var plots []world.Plot
		var docs map[string][]byte
		if r, ok := c.(world.Reporter); ok {
			tables, plots = r.Tables(), r.Plots()
		}
		if d, ok := c.(world.Documenter); ok {
			docs = d.Documents()
		}
		if len(tables) == 0 && len(plots) == 0 && len(docs) == 0 {
			continue
		}
		if err := os.MkdirAll(cdir, 0o755); err != nil {
			return files, fmt.Errorf("create %s: %w", cdir, err)
		}
		for _, name := range slices.Sorted(maps.Keys(docs)) {
			path := filepath.Join(cdir, fileSafe(name))
			if err := engine.WriteFileAtomic(path, docs[name]); err != nil {
				return files, fmt.Errorf("component %s: %w", c.Name(), err)
			}
			files = append(files, path)
		}
		for _, t := range tables {
			written, err := writeTable(cdir, t)
			files = append(files, written...)
			if err != nil {
				return files, fmt.Errorf("component %s: %w", c.Name(), err)
			}
		}
		for _, p := range plots {
			path := filepath.Join(cdir, fileSafe(p.Name)+".png")
			if err := DrawPlot(p, path); err != nil {
				return files, fmt.Errorf("component %s: %w", c.Name(), err)
			}
			files = append(files, path)
		}
	}
	return files, nil
}

func writeTable(dir string, t world.Table) ([]string, error) {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	cw.Write(t.Columns)
	for _, row := range t.Rows {
		rec := make([]string, len(row))
		for i, v := range row {
			if f, ok := v.(float64); ok {
				rec[i] = num(f)
			} else {
				rec[i] = fmt.Sprint(v)
			}
		}
		cw.Write(rec)
	}
	cw.Flush()
	base := filepath.Join(dir, fileSafe(t.Name))
	if err := engine.WriteFileAtomic(base+".csv", b.Bytes()); err != nil {
		return nil, err
	}
	// JSON: one object per row, keyed by column.
	objs := make([]map[string]any, len(t.Rows))
	for i, row := range t.Rows {
		objs[i] = make(map[string]any, len(t.Columns))
		for j, col := range t.Columns {
			if j < len(row) {
				objs[i][col] = row[j]
			}
		}
	}
	js, err := json.MarshalIndent(objs, "", "  ")
	if err != nil {
		return []string{base + ".csv"}, fmt.Errorf("table %s: %w", t.Name, err)
	}
	if err := engine.WriteFileAtomic(base+".json", append(js, '\n')); err != nil {
		return []string{base + ".csv"}, err
	}
	return []string{base + ".csv", base + ".json"}, nil
}

// DrawPlot draws a component's plot as a PNG.
func DrawPlot(p world.Plot, path string) error {
	pl := plot.New()
	pl.Title.Text, pl.X.Label.Text, pl.Y.Label.Text = p.Title, p.X, p.Y
	for i, s := range p.Series {
		if p.Histogram {
			if len(s.Y) == 0 {
				continue
			}
			h, err := plotter.NewHist(plotter.Values(s.Y), 20)
			if err != nil {
				return fmt.Errorf("plot %s: %w", p.Name, err)
			}
			h.FillColor = plotutil.Color(i)
			pl.Add(h)
			pl.Legend.Add(s.Label, h)
			continue
		}
		pts := make(plotter.XYs, min(len(s.X), len(s.Y)))
		for k := range pts {
			pts[k] = plotter.XY{X: s.X[k], Y: s.Y[k]}
		}
		if len(pts) == 0 {
			continue
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("plot %s: %w", p.Name, err)
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i / 7)
		pl.Add(line)
		pl.Legend.Add(s.Label, line)
	}
	pl.Legend.Top = true
	if err := pl.Save(18*vg.Centimeter, 11*vg.Centimeter, path); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}
