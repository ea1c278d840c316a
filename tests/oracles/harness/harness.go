// The part every operator oracle shares (tests/oracles/v2beta1, v1 and v1alpha2: the LocalTools that
// list this file in tests/cluster/gotools.py): reading the job, printing what was created, exiting.
// Copied into each oracle's build beside its main.go, so it uses only the standard library and
// sigs.k8s.io/yaml, which every pinned k8s.io/apimachinery (v0.15 to v0.35) brings. canonical.go beside
// it (v2beta1, v1) spells mpigen's objects as the API server stores them.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"sigs.k8s.io/yaml"
)

// fail prints err on stderr and exits with code (1: the operator refuses the job; 2: anything else).
func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(code)
}

// readJSON reads one object, JSON as it is (a YAML reader refuses some strings JSON carries, control
// characters among them), else YAML converted to JSON.
func readJSON(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if json.Valid(data) {
		return data, nil
	}
	return yaml.YAMLToJSON(data)
}

// printList prints objects as a v1 List on stdout.
func printList(objects []map[string]any) {
	out, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": objects})
	if err != nil {
		fail(2, err)
	}
	fmt.Println(string(out))
}

// stored is an object as the operator left it in the fake clientset: its apiVersion and kind set, no
// status, resourceVersion or creationTimestamp (the API server's, not the operator's).
func stored(apiVersion, kind string, u map[string]any) map[string]any {
	u["apiVersion"], u["kind"] = apiVersion, kind
	delete(u, "status")
	if meta, ok := u["metadata"].(map[string]any); ok {
		delete(meta, "resourceVersion")
		delete(meta, "creationTimestamp")
	}
	return u
}

// sortObjects orders objects by kind, then name.
func sortObjects(objects []map[string]any) {
	name := func(obj map[string]any) string {
		return obj["metadata"].(map[string]any)["name"].(string)
	}
	sort.SliceStable(objects, func(i, j int) bool {
		a, b := objects[i], objects[j]
		if a["kind"] != b["kind"] {
			return a["kind"].(string) < b["kind"].(string)
		}
		return name(a) < name(b)
	})
}
