// Command goyaml prints the JSON kubectl would send for YAML streams: the test suite's reference for how
// Kubernetes reads YAML (sigs.k8s.io/yaml over go-yaml v2, behind apimachinery's YAMLOrJSONDecoder, as
// `kubectl apply -f` reads a file).
//
// Input on stdin: a JSON array of YAML streams. Output on stdout: a JSON array with one entry per stream,
// {"documents": [<JSON of each non-empty document>]} or {"error": "<message>"}. Empty documents (no
// bytes, or null) are left out, as kubectl's stream visitor leaves them out.
package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

type result struct {
	Documents []json.RawMessage `json:"documents,omitempty"`
	Error     string            `json:"error,omitempty"`
}

func read(stream string) (out result) {
	defer func() {
		if caught := recover(); caught != nil {
			out = result{Error: "panic"}
		}
	}()
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(stream)), 4096)
	out.Documents = []json.RawMessage{}
	for {
		var document runtime.RawExtension
		if err := decoder.Decode(&document); err != nil {
			if err == io.EOF {
				return out
			}
			return result{Error: err.Error()}
		}
		raw := bytes.TrimSpace(document.Raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		out.Documents = append(out.Documents, json.RawMessage(raw))
	}
}

func main() {
	var streams []string
	if err := json.NewDecoder(os.Stdin).Decode(&streams); err != nil {
		os.Stderr.WriteString("goyaml: stdin is not a JSON array of strings: " + err.Error() + "\n")
		os.Exit(2)
	}
	results := make([]result, len(streams))
	for i, stream := range streams {
		results[i] = read(stream)
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(results); err != nil {
		os.Exit(1)
	}
}
