package eval

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one share of an evaluation's episodes: shard Index (0-based) of
// Count. Episode k keeps its seed, engine.EpisodeSeed(seed, k), whatever the
// sharding, so the shards of a run together play exactly the episodes of the
// unsharded run. The zero Shard is the whole run.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Sharded reports whether s is a share of a run rather than all of it.
func (s Shard) Sharded() bool { return s.Count > 0 }

// String formats s as "K/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Validate checks that 0 <= Index < Count.
func (s Shard) Validate() error {
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d/%d: want K/N with 0 <= K < N", s.Index, s.Count)
	}
	return nil
}

// Episodes lists the episodes (1-based) of a run of total episodes that
// belong to s: a contiguous block, the first total%Count shards one episode
// longer than the rest. The zero Shard has them all; a shard of a run with
// fewer episodes than shards may have none.
func (s Shard) Episodes(total int) []int {
	lo, hi := 0, total
	if s.Sharded() {
		base, extra := total/s.Count, total%s.Count
		lo = s.Index*base + min(s.Index, extra)
		hi = lo + base
		if s.Index < extra {
			hi++
		}
	}
	eps := make([]int, 0, hi-lo)
	for k := lo + 1; k <= hi; k++ {
		eps = append(eps, k)
	}
	return eps
}

// ParseShard reads "K/N" (0 <= K < N).
func ParseShard(v string) (Shard, error) {
	k, n, ok := strings.Cut(v, "/")
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want K/N, e.g. 0/8", v)
	}
	s := Shard{Index: ki, Count: ni}
	return s, s.Validate()
}

// Environment variables the batch schedulers set, and Arena's own count.
const (
	EnvSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	EnvSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	EnvK8sIndex       = "JOB_COMPLETION_INDEX"
	EnvShards         = "ARENA_SHARDS"
)

// ShardFromEnv finds the shard a batch scheduler asked for, reading its
// variables through getenv (os.Getenv):
//
//   - a Slurm job array: the task's place in the array,
//     SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT
//     (submit with --array=0-(N-1), or any contiguous range);
//   - a Kubernetes Indexed Job: JOB_COMPLETION_INDEX, of shards (the
//     --shards flag) or else ARENA_SHARDS.
//
// It returns the zero Shard and an empty source when no scheduler variable
// is set, and source names the variables it used.
func ShardFromEnv(getenv func(string) string, shards int) (s Shard, source string, err error) {
	atoi := func(name string) (int, error) {
		v, err := strconv.Atoi(strings.TrimSpace(getenv(name)))
		if err != nil {
			return 0, fmt.Errorf("%s=%q: want a whole number", name, getenv(name))
		}
		return v, nil
	}
	switch {
	case getenv(EnvSlurmTaskID) != "":
		id, err := atoi(EnvSlurmTaskID)
		if err != nil {
			return Shard{}, "", err
		}
		if getenv(EnvSlurmTaskCount) == "" {
			return Shard{}, "", fmt.Errorf("%s is set but %s is not", EnvSlurmTaskID, EnvSlurmTaskCount)
		}
		n, err := atoi(EnvSlurmTaskCount)
		if err != nil {
			return Shard{}, "", err
		}
		lo := 0
		if getenv(EnvSlurmTaskMin) != "" {
			if lo, err = atoi(EnvSlurmTaskMin); err != nil {
				return Shard{}, "", err
			}
		}
		s, source = Shard{Index: id - lo, Count: n}, EnvSlurmTaskID+"/"+EnvSlurmTaskCount
	case getenv(EnvK8sIndex) != "":
		idx, err := atoi(EnvK8sIndex)
		if err != nil {
			return Shard{}, "", err
		}
		source = EnvK8sIndex + " and --shards"
		if shards == 0 {
			if getenv(EnvShards) == "" {
				return Shard{}, "", fmt.Errorf("%s is set: give the number of shards with --shards N or %s", EnvK8sIndex, EnvShards)
			}
			if shards, err = atoi(EnvShards); err != nil {
				return Shard{}, "", err
			}
			source = EnvK8sIndex + " and " + EnvShards
		}
		s = Shard{Index: idx, Count: shards}
	default:
		return Shard{}, "", nil
	}
	if err := s.Validate(); err != nil {
		return Shard{}, "", fmt.Errorf("%s: %w (a Slurm array must be a contiguous range such as --array=0-7)", source, err)
	}
	return s, source, nil
}
