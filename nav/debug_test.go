package nav

import (
	"fmt"
	"os"
	"testing"
)

func TestDebugWorst(t *testing.T) {
	name := os.Getenv("DBG_MAP")
	if name == "" {
		t.Skip()
	}
	dir, _ := movingAIDir()
	g, probs := loadMovingAIFiles(t, dir+"/"+name+".map", dir+"/"+name+".map.scen")
	p := NewPlanner(g, Options{})
	type bad struct {
		i int
		r float64
	}
	var worst []bad
	for i, pr := range probs {
		if pr.Optimal == 0 {
			continue
		}
		path, err := p.FindPath(pr.Start.Center(), pr.Goal.Center())
		if err != nil {
			t.Fatal(err)
		}
		r := PathLength(path) / pr.Optimal
		if r > 1.04 {
			worst = append(worst, bad{i, r})
		}
	}
	fmt.Println("count >1.04:", len(worst))
	for k, w := range worst {
		if k > 12 {
			break
		}
		pr := probs[w.i]
		route, _ := p.FindCells(pr.Start, pr.Goal)
		fmt.Printf("#%d bucket %d %v→%v opt %.2f ratio %.3f manh %d routeLen %d\n", w.i, pr.Bucket, pr.Start, pr.Goal, pr.Optimal, w.r, manhattan(pr.Start, pr.Goal), len(route))
	}
}
