package engine

// OnWorkersAlways makes r hand even a few agents to its workers, so that
// tests of small worlds run them concurrently.
func OnWorkersAlways(r *Runner) { r.minParallel = 1 }
