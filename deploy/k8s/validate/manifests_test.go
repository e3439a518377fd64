// Package validate checks deploy/k8s's manifests against the Kubernetes API
// types of a pinned k8s.io/api (v0.32.4): every document decodes strictly
// (an unknown or misspelt field, or a value of the wrong type, fails), and
// the parts Arena relies on are checked by name. It is a module of its own
// so that Arena's module does not depend on Kubernetes' packages.
package validate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// decode reads every document of the manifests into its typed object.
func decode(t *testing.T) map[string]any {
	t.Helper()
	files, err := filepath.Glob("../*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	objs := map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(b, []byte("\n---\n")) {
			var head struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s document %d: %v", f, i+1, err)
			}
			var obj any
			switch head.APIVersion + " " + head.Kind {
			case "batch/v1 Job":
				obj = &batchv1.Job{}
			case "apps/v1 Deployment":
				obj = &appsv1.Deployment{}
			case "v1 Service":
				obj = &corev1.Service{}
			case "v1 PersistentVolumeClaim":
				obj = &corev1.PersistentVolumeClaim{}
			default:
				t.Fatalf("%s document %d: unexpected %s %s", f, i+1, head.APIVersion, head.Kind)
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				t.Fatalf("%s document %d (%s): %v", f, i+1, head.Kind, err)
			}
			name := obj.(interface{ GetName() string }).GetName()
			objs[head.Kind+"/"+name] = obj
		}
	}
	return objs
}

func TestManifestsDecodeStrictly(t *testing.T) {
	objs := decode(t)
	var names []string
	for k := range objs {
		names = append(names, k)
	}
	slices.Sort(names)
	want := []string{"Deployment/arena-serve", "Job/arena-eval", "Job/arena-eval-merge", "PersistentVolumeClaim/arena-runs", "Service/arena-serve"}
	if !slices.Equal(names, want) {
		t.Fatalf("manifests hold %v, want %v", names, want)
	}
}

func TestAMisspeltFieldIsRefused(t *testing.T) {
	doc := []byte("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {completionMode: Indexed, completion: 3}\n")
	if err := yaml.UnmarshalStrict(doc, &batchv1.Job{}); err == nil || !strings.Contains(err.Error(), "completion") {
		t.Fatalf("a misspelt field decoded: %v", err)
	}
}

func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func TestEvalJobIsAnIndexedJobOfItsShards(t *testing.T) {
	objs := decode(t)
	job := objs["Job/arena-eval"].(*batchv1.Job)
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatal("arena-eval must be an Indexed Job (JOB_COMPLETION_INDEX picks the shard)")
	}
	c := job.Spec.Template.Spec.Containers[0]
	var shards string
	for _, e := range c.Env {
		if e.Name == "ARENA_SHARDS" {
			shards = e.Value
		}
	}
	if shards != fmt.Sprint(*job.Spec.Completions) {
		t.Fatalf("ARENA_SHARDS=%q but completions=%d: every shard must run", shards, *job.Spec.Completions)
	}
	if c.Args[0] != "eval" || flagValue(c.Args, "--out") == "" {
		t.Fatalf("eval job args %v: want eval ... --out DIR", c.Args)
	}
	merge := objs["Job/arena-eval-merge"].(*batchv1.Job)
	m := merge.Spec.Template.Spec.Containers[0]
	if !slices.Equal(m.Args[:2], []string{"eval", "merge"}) || m.Args[len(m.Args)-1] != flagValue(c.Args, "--out") {
		t.Fatalf("merge job args %v: want eval merge ... %s", m.Args, flagValue(c.Args, "--out"))
	}
	for _, j := range []*batchv1.Job{job, merge} {
		spec := j.Spec.Template.Spec
		if spec.Volumes[0].PersistentVolumeClaim == nil || spec.Volumes[0].PersistentVolumeClaim.ClaimName != "arena-runs" {
			t.Fatalf("%s must write to the shared claim arena-runs", j.Name)
		}
		if spec.Containers[0].Resources.Requests.Cpu().IsZero() {
			t.Fatalf("%s has no CPU request", j.Name)
		}
	}
	pvc := objs["PersistentVolumeClaim/arena-runs"].(*corev1.PersistentVolumeClaim)
	if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Fatal("shards on several nodes need a ReadWriteMany volume")
	}
}

func TestServeDeploymentProbesTheAdminEndpoints(t *testing.T) {
	objs := decode(t)
	dep := objs["Deployment/arena-serve"].(*appsv1.Deployment)
	spec := dep.Spec.Template.Spec
	c := spec.Containers[0]
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Fatal("serve needs a liveness probe on /healthz and a readiness probe on /readyz")
	}
	admin := flagValue(c.Args, "--admin-listen")
	var adminPort int32
	for _, p := range c.Ports {
		if p.Name == c.ReadinessProbe.HTTPGet.Port.StrVal {
			adminPort = p.ContainerPort
		}
	}
	if admin != fmt.Sprintf("tcp:0.0.0.0:%d", adminPort) {
		t.Fatalf("--admin-listen %q does not listen on the probes' port %d on every interface", admin, adminPort)
	}
	drain := flagValue(c.Args, "--drain-timeout")
	var d int64
	if _, err := fmt.Sscanf(drain, "%ds", &d); err != nil {
		t.Fatalf("--drain-timeout %q: want whole seconds", drain)
	}
	if spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds <= d {
		t.Fatalf("terminationGracePeriodSeconds must exceed --drain-timeout %ds, or the kubelet kills a draining server", d)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Fatal("serve needs resource requests and limits")
	}
	svc := objs["Service/arena-serve"].(*corev1.Service)
	for k, v := range svc.Spec.Selector {
		if dep.Spec.Template.Labels[k] != v {
			t.Fatalf("the Service selects %s=%s, which the pods do not carry", k, v)
		}
	}
}
