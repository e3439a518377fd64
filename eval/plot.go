package eval

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Plot draws the report's PNG plots into dir and returns their paths: the
// distribution of episode scores (score.png), and each metric over the
// episodes with its mean (metric-NAME.png).
func (r *Report) Plot(dir string) ([]string, error) {
	if len(r.Episodes) == 0 {
		return nil, fmt.Errorf("plot: no episodes")
	}
	var paths []string
	scores := make(plotter.Values, len(r.Episodes))
	for i, e := range r.Episodes {
		scores[i] = e.MeanScore
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: mean score per episode (%d episodes, %s)", r.Scenario, len(r.Episodes), r.Score)
	p.X.Label.Text = "mean score of the episode's agents"
	p.Y.Label.Text = "episodes"
	bins := min(20, max(5, len(scores)/5))
	h, err := plotter.NewHist(scores, bins)
	if err != nil {
		return nil, fmt.Errorf("plot score histogram: %w", err)
	}
	h.FillColor = plotutil.Color(0)
	p.Add(h)
	path := filepath.Join(dir, "score.png")
	if err := p.Save(16*vg.Centimeter, 10*vg.Centimeter, path); err != nil {
		return nil, fmt.Errorf("save %s: %w", path, err)
	}
	paths = append(paths, path)

	for _, m := range r.Metrics {
		pts := make(plotter.XYs, len(r.Episodes))
		for i, e := range r.Episodes {
			pts[i] = plotter.XY{X: float64(e.Episode), Y: e.Metrics[m.Name]}
		}
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s: %s over episodes (%s)", r.Scenario, m.Name, m)
		p.X.Label.Text = "episode"
		p.Y.Label.Text = m.Name + " (mean over agents)"
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", m.Name, err)
		}
		line.Color, points.Color = plotutil.Color(0), plotutil.Color(0)
		mean, err := plotter.NewLine(plotter.XYs{{X: 1, Y: m.Mean}, {X: float64(len(r.Episodes)), Y: m.Mean}})
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", m.Name, err)
		}
		mean.Color, mean.Dashes = plotutil.Color(1), []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(line, points, mean)
		p.Legend.Add("per episode", line, points)
		p.Legend.Add("mean", mean)
		p.Legend.Top = true
		path := filepath.Join(dir, "metric-"+fileSafe(m.Name)+".png")
		if err := p.Save(16*vg.Centimeter, 10*vg.Centimeter, path); err != nil {
			return nil, fmt.Errorf("save %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// fileSafe keeps letters, digits, '-', '_' and '.', replacing the rest.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
}
