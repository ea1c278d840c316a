// podsecurity: the Pod Security Standards evaluator of the Kubernetes API server
// (k8s.io/pod-security-admission/policy), run over a stream of manifests.
//
// Usage: podsecurity [-level restricted|baseline|privileged] [-version latest|v1.N] < objects.yaml
//
// For every pod an object holds (a Pod; a pod template under spec.template or
// spec.jobTemplate.spec.template; each replicated job's of a JobSet, each task's of a Volcano Job), it
// prints one JSON line (a JobSet's or Volcano Job's named <object>-<replicated job or task>):
//
//	{"kind":"Job","name":"pi-launcher","allowed":false,"violations":[{"reason":"...","detail":"..."}]}
//
// Objects without a pod are skipped. Exit 0 when every line was written (whatever the verdicts),
// 2 on unreadable input.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

type violation struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

type verdict struct {
	Kind       string      `json:"kind"`
	Name       string      `json:"name"`
	Allowed    bool        `json:"allowed"`
	Violations []violation `json:"violations"`
}

type object struct {
	Kind     string            `json:"kind"`
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     json.RawMessage   `json:"spec"`
}

type withTemplate struct {
	Template    *corev1.PodTemplateSpec `json:"template"`
	JobTemplate *struct {
		Spec struct {
			Template *corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	} `json:"jobTemplate"`
	// A JobSet (jobset.x-k8s.io): a Job template per replicated job.
	ReplicatedJobs []struct {
		Name     string `json:"name"`
		Template struct {
			Spec struct {
				Template *corev1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"replicatedJobs"`
	// A Volcano Job (batch.volcano.sh): a pod template per task.
	Tasks []struct {
		Name     string                  `json:"name"`
		Template *corev1.PodTemplateSpec `json:"template"`
	} `json:"tasks"`
}

// held is one pod an object holds: its name in the verdicts (the object's, or `<object>-<replicated
// job or task>` for a JobSet or a Volcano Job), metadata and spec.
type held struct {
	name string
	meta *metav1.ObjectMeta
	spec *corev1.PodSpec
}

// pods returns the pods an object holds, none for an object without one.
func pods(obj object) ([]held, error) {
	if len(obj.Spec) == 0 {
		return nil, nil
	}
	if obj.Kind == "Pod" {
		spec := &corev1.PodSpec{}
		if err := json.Unmarshal(obj.Spec, spec); err != nil {
			return nil, err
		}
		return []held{{obj.Metadata.Name, &obj.Metadata, spec}}, nil
	}
	holder := withTemplate{}
	if err := json.Unmarshal(obj.Spec, &holder); err != nil {
		return nil, nil // a spec of another shape holds no pod
	}
	template := holder.Template
	if template == nil && holder.JobTemplate != nil {
		template = holder.JobTemplate.Spec.Template
	}
	if template != nil {
		return []held{{obj.Metadata.Name, &template.ObjectMeta, &template.Spec}}, nil
	}
	found := []held{}
	for _, job := range holder.ReplicatedJobs {
		if t := job.Template.Spec.Template; t != nil {
			found = append(found, held{obj.Metadata.Name + "-" + job.Name, &t.ObjectMeta, &t.Spec})
		}
	}
	for _, task := range holder.Tasks {
		if t := task.Template; t != nil {
			found = append(found, held{obj.Metadata.Name + "-" + task.Name, &t.ObjectMeta, &t.Spec})
		}
	}
	return found, nil
}

func main() {
	levelFlag := flag.String("level", string(api.LevelRestricted), "restricted, baseline or privileged")
	versionFlag := flag.String("version", "latest", "policy version: latest or v1.N")
	flag.Parse()
	level, err := api.ParseLevel(*levelFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	version, err := api.ParseVersion(*versionFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	decoder := utilyaml.NewYAMLOrJSONDecoder(os.Stdin, 4096)
	for {
		raw := map[string]interface{}{}
		if err := decoder.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return
			}
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if len(raw) == 0 {
			continue
		}
		data, _ := json.Marshal(raw)
		obj := object{}
		if err := yaml.Unmarshal(data, &obj); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		found, err := pods(obj)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s/%s: %v\n", obj.Kind, obj.Metadata.Name, err)
			os.Exit(2)
		}
		for _, one := range found {
			results := evaluator.EvaluatePod(api.LevelVersion{Level: level, Version: version}, one.meta, one.spec)
			line := verdict{Kind: obj.Kind, Name: one.name, Allowed: true, Violations: []violation{}}
			for _, result := range results {
				if !result.Allowed {
					line.Allowed = false
					line.Violations = append(line.Violations, violation{result.ForbiddenReason, result.ForbiddenDetail})
				}
			}
			encoded, _ := json.Marshal(line)
			out.Write(append(encoded, '\n'))
		}
	}
}
