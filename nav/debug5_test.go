package nav

import (
	"os"
	"testing"
)

func BenchmarkBuildRandom512(b *testing.B) {
	dir, _ := movingAIDir()
	f, _ := os.Open(dir + "/random512-10-0.map")
	g, _ := LoadMovingAIMap(f)
	f.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		NewPlanner(g, Options{})
	}
}
